"""The report's build costs: for the workspace and each build variant, what its LLM stages asked of
the model per token of source text (billed prompt, computed prompt and completion tokens; the rule
in tasks/llm/client/token_costs.py). A build that made no LLM call (offline) has no row."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow.dataset as ds

from flows.stages import STAGES
from schemas.tables import TABLES
from tasks.llm.client.token_costs import tokens_per_source
from tasks.tables.io import Workspace, read_table

LLM_STAGES = frozenset(stage.name for stage in STAGES if stage.uses_llm)
CALL_COLUMNS = ["status", "model", "prompt_tokens", "cached_prompt_tokens", "completion_tokens"]


def build_call_files(workspace: Workspace) -> list[Path]:
    """The workspace's llm_calls partitions written by build stages: `<doc>__<stage>`, not the
    answering or judging partitions of evaluation runs (`<doc>__answer-<run>`, `__judge-<run>`)."""
    return [p for p in workspace.partitions("llm_calls") if p.stem.rsplit("__", 1)[-1] in LLM_STAGES]


def build_calls(workspace: Workspace) -> pd.DataFrame:
    """The build's llm_calls rows, cost columns only (a file written before a column was declared
    reads it as null: its server's cache is then not known)."""
    files = build_call_files(workspace)
    schema = TABLES["llm_calls"].schema
    if not files:
        return schema.empty_table().select(CALL_COLUMNS).to_pandas()
    dataset = ds.dataset([str(p) for p in files], schema=schema, format="parquet")
    return dataset.to_table(CALL_COLUMNS).to_pandas()


def cost_row(name: str, calls: pd.DataFrame, source_tokens: int) -> dict[str, object] | None:
    """One build's row of the report (None without an LLM call): named with its models, and its costs."""
    if calls.empty:
        return None
    models = ", ".join(sorted(set(calls["model"].dropna()))) or "model not reported"
    return {"build": f"{name} · {models}", **tokens_per_source(calls, source_tokens)}


def build_costs(places: list[Workspace]) -> pd.DataFrame:
    """A row per build that asked a model: the workspace ('base') first, then its variants."""
    rows = []
    for place, workspace in enumerate(places):
        name = "base" if place == 0 else f"{workspace.root.name} (variant)"
        source = int(read_table(workspace, "chunks", columns=["n_tokens"])["n_tokens"].to_pandas().sum())
        row = cost_row(name, build_calls(workspace), source)
        if row is not None:
            rows.append(row)
    return pd.DataFrame(rows)
