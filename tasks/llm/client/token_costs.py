"""What LLM calls cost, counted from their `llm_calls` rows: prompt tokens billed, prompt tokens the
server computed (billed less those it read from its prefix cache), completion tokens, each per
source token. A GPU's time goes to computed tokens; a hosted API bills the others."""

from __future__ import annotations

from typing import Any

import pandas as pd


def computed_prompt_tokens(calls: pd.DataFrame) -> int:
    """Prompt tokens the server computed over `calls` (one row per attempt): billed minus those read
    from its prefix cache. A row whose server did not say what it cached counts in full, so the
    figure is never below what was computed."""
    if calls.empty:
        return 0
    billed = calls["prompt_tokens"].fillna(0)
    cached = calls["cached_prompt_tokens"].fillna(0) if "cached_prompt_tokens" in calls else 0
    return int((billed - cached).clip(lower=0).sum())


def _per(tokens: float, source_tokens: int) -> float | None:
    return tokens / source_tokens if source_tokens > 0 else None  # no text read: no ratio


def tokens_per_source(calls: pd.DataFrame, source_tokens: int) -> dict[str, Any]:
    """One build's LLM cost: requests sent (replies from NKW's own cache are rows with no tokens),
    how many of them had a server say what it cached, and billed prompt, computed prompt and
    completion tokens per token of source text (`source_tokens`: the build's chunks)."""
    sent = calls[calls["status"] != "cached"] if not calls.empty else calls
    said = int(sent["cached_prompt_tokens"].notna().sum()) if "cached_prompt_tokens" in sent else 0
    return {
        "source_tokens": int(source_tokens),
        "requests": len(sent),
        "cache_reported": said,
        "prompt_per_source": _per(float(calls["prompt_tokens"].fillna(0).sum()), source_tokens),
        "computed_per_source": _per(float(computed_prompt_tokens(calls)), source_tokens),
        "completion_per_source": _per(float(calls["completion_tokens"].fillna(0).sum()), source_tokens),
    }
