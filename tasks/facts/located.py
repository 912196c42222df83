"""One atomic_facts row from a model's fact: its evidence located in the excerpt it came from.

Shared by the separate facts pass (tasks.facts.llm) and the combined extraction pass
(tasks.facts.combined), so both write the same row for the same reply.
"""

from __future__ import annotations

from typing import Any, Sequence

from schemas.ids import make_id
from tasks.facts.heuristics import MAX_FACT_CHARS
from tasks.narrative.inputs import NarrativeInputs, clip_to_chunk, locate_quote

METHOD = "llm"


def located_fact_row(
    inputs: NarrativeInputs,
    entity_id: str,
    chunk: dict[str, Any],
    key: str,
    *,
    text: str,
    fact_type: str,
    related: Sequence[str],
    evidence: str,
) -> dict[str, Any]:
    """The evidence span in its chunk (the whole chunk when the quote is not found); related names
    resolved to canonical entities other than the fact's own."""
    found = locate_quote(str(chunk["text"]), evidence)
    offset = int(chunk["char_start"])
    start, end = (offset + found[0], offset + found[1]) if found else (offset, int(chunk["char_end"]))
    chunk_row, start, end = clip_to_chunk(inputs, start, end)
    resolved = [e for e in (inputs.lexicon.resolve_one(n) for n in related) if e and e != entity_id]
    return {
        "fact_id": make_id("fact", inputs.doc_id, entity_id, key),
        "doc_id": inputs.doc_id,
        "entity_id": entity_id,
        "text": text.strip()[:MAX_FACT_CHARS],
        "fact_type": fact_type,
        "related_entity_ids": list(dict.fromkeys(resolved)),
        "chunk_id": chunk_row["chunk_id"],
        "section_id": chunk_row["section_id"],
        "char_start": start,
        "char_end": end,
        "method": METHOD,
    }
