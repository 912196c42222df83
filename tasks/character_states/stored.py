"""Character states the combined extraction already wrote (`raw_units` rows of kind "state", stored
per chunk by extract_graph): read back per scene as the first round's replies, so the states stage
asks the model nothing for them. The extraction read each passage once for the graph, the units,
the facts and these states; a separate first round read every scene a second time (about 1.4
computed prompt tokens per source token on the bundled samples with the 0.5B model). A payload that
does not parse is a `failures` row; the rest are kept."""

from __future__ import annotations

import json

import pandas as pd
from pydantic import ValidationError

from schemas.responses.continuity import StateItem, StatesReply


def stored_states(
    raw_units: pd.DataFrame | None, chunks: pd.DataFrame, doc_id: str, stage: str
) -> tuple[dict[str, StatesReply] | None, list[dict[str, str]]]:
    """One StatesReply per section (its chunks' states in chunk and reply order), and failures rows;
    None when the document has no raw units at all (its extraction ran offline or in separate
    passes, so nothing wrote states and the first round must be asked)."""
    if raw_units is None or raw_units.empty:
        return None, []
    section_of = dict(zip(chunks["chunk_id"], chunks["section_id"]))
    order = dict(zip(chunks["chunk_id"], chunks["ordinal"]))
    rows = raw_units[raw_units["kind"] == "state"]
    rows = rows.assign(_order=rows["chunk_id"].map(order)).sort_values(["_order", "position"])
    by_section: dict[str, list[StateItem]] = {}
    failures: list[dict[str, str]] = []
    for row in rows.itertuples():
        try:
            item = StateItem.model_validate_json(row.payload)
        except ValidationError as error:
            failures.append(
                {
                    "doc_id": doc_id,
                    "stage": stage,
                    "item_id": str(row.raw_unit_id),
                    "error": f"raw unit payload does not match StateItem: {error.errors()[0]['msg']}",
                    "payload": json.dumps({"chunk_id": str(row.chunk_id), "position": int(row.position)}),
                }
            )
            continue
        section_id = section_of.get(row.chunk_id)
        if section_id is not None:
            by_section.setdefault(str(section_id), []).append(item)
    replies = {s: StatesReply.model_construct(states=items) for s, items in by_section.items()}
    return replies, failures
