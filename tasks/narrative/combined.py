"""Narrative units from the combined extraction's `raw_units` (written by extract_graph): each
chunk's events, interactions and occasions, read back as the reply models they came from, then
resolved and located exactly as replies of the separate narrative pass are (names to canonical
entity ids, evidence quotes to spans). No LLM call. Names that resolve to no canonical entity are
left out and counted; a row whose payload does not parse is a `failures` row."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd
from pydantic import ValidationError

from schemas.responses.narrative import EventItem, InteractionItem, NarrativeReply, OccasionItem

MODELS = {"event": EventItem, "interaction": InteractionItem, "occasion": OccasionItem}
FIELDS = {"event": "events", "interaction": "interactions", "occasion": "occasions"}


def failure_row(doc_id: str, stage: str, row: Any, error: str) -> dict[str, str]:
    payload = {"chunk_id": str(row.chunk_id), "kind": str(row.kind), "position": int(row.position)}
    return {
        "doc_id": doc_id,
        "stage": stage,
        "item_id": str(row.raw_unit_id),
        "error": error,
        "payload": json.dumps(payload),
    }


def stored_replies(
    raw_units: pd.DataFrame, doc_id: str, stage: str
) -> tuple[dict[str, NarrativeReply], list[dict[str, str]]]:
    """One NarrativeReply per chunk from its raw unit rows (in stored order), and failures rows."""
    parts: dict[str, dict[str, list[Any]]] = {}
    failures = []
    if raw_units is None or raw_units.empty:
        return {}, []
    wanted = raw_units[raw_units["kind"].isin(list(MODELS))].sort_values(["chunk_id", "kind", "position"])
    for row in wanted.itertuples():
        try:
            item = MODELS[row.kind].model_validate_json(row.payload)
        except ValidationError as error:
            message = (
                f"raw unit payload does not match {MODELS[row.kind].__name__}: {error.errors()[0]['msg']}"
            )
            failures.append(failure_row(doc_id, stage, row, message))
            continue
        lists = parts.setdefault(str(row.chunk_id), {name: [] for name in FIELDS.values()})
        lists[FIELDS[row.kind]].append(item)
    replies = {chunk_id: NarrativeReply.model_construct(**lists) for chunk_id, lists in parts.items()}
    return replies, failures


def unresolved_names(replies: dict[str, NarrativeReply], resolve: Any) -> int:
    """How many participant, subject, object and setting names resolve to no canonical entity."""
    missing = 0
    for reply in replies.values():
        names: list[str | None] = []
        for event in reply.events:
            names += [*event.participants, event.setting]
        for item in reply.interactions:
            names += [item.subject, *item.objects]
        for occasion in reply.occasions:
            names += [*occasion.participants, occasion.setting]
        missing += sum(1 for name in names if name and resolve(name) is None)
    return missing
