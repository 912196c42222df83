"""Dry-run estimates that render a stage's own requests from a previous build's rows (the same
grouping and the same prompt text the stage sends) and count their prompt tokens: used for the
stages whose requests are built from tables alone (canonicalize_entities, assemble_episodes,
relate_episodes, break_cycles, induce_storylines)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.config import Settings
from tasks.canonicalize.canonicalize_entities import PROMPT_ID as MERGE_PROMPT
from tasks.canonicalize.records import merge_requests
from tasks.llm.prompts import load_prompt, render_messages
from tasks.text import count_tokens


def rendered_tokens(prompt_id: str, language: str, values: dict[str, Any]) -> int:
    """Prompt tokens of one request as the stage sends it (every message counted)."""
    messages = render_messages(load_prompt(prompt_id, language), values)
    return sum(count_tokens(m["content"]) for m in messages)


def documents(f: dict[str, pd.DataFrame]) -> dict[str, tuple[str, str]]:
    """doc id -> (title, language) of the documents in the frames."""
    return {str(r.doc_id): (str(r.title), str(r.language)) for r in f["documents"].itertuples()}


def canonicalize(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """The open pairs (decided `rule:no_evidence` offline, `llm` by an LLM build) as merge requests."""
    decisions = f["merge_decisions"]
    asked = decisions[decisions["method"].isin(["rule:no_evidence", "llm"])]
    titles = documents(f)
    calls = prompt = 0
    for doc_id, group in asked.groupby("doc_id"):
        undecided = [(str(r.left), str(r.right), float(r.score)) for r in group.itertuples()]
        in_doc = {name: frame[frame["doc_id"] == doc_id] for name, frame in f.items() if "doc_id" in frame}
        raw = (in_doc["raw_entities"], in_doc["raw_mentions"], in_doc["chunks"])
        plan = merge_requests(undecided, *raw, s.canonicalize_entities)
        title, language = titles.get(str(doc_id), ("", "en"))
        calls += len(plan.groups)
        prompt += sum(
            rendered_tokens(MERGE_PROMPT, language, plan.values(ids, title, language)) for ids in plan.groups
        )
    return calls, prompt
