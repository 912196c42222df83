"""What every query-time tool returns: rows of evidence with provenance back to the source
(document, section heading and ordinal, chunk, character span)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolRow:
    # chunk | sentence | section | fact | entity | relation | attribute | event | interaction | occasion |
    # episode | storyline | mapping
    kind: str
    item_id: str
    text: str
    score: float
    channel: str
    doc_id: str
    section_id: str | None = None
    heading: str | None = None
    section_ordinal: int | None = None
    chunk_id: str | None = None
    char_start: int | None = None
    char_end: int | None = None
    source_chunk_ids: tuple[str, ...] = ()  # every chunk this row is grounded in, best first
    entity_ids: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["source_chunk_ids"] = list(self.source_chunk_ids)
        data["entity_ids"] = list(self.entity_ids)
        return data


def provenance(
    store,
    chunk_ids: list[str] | tuple[str, ...],
    section_id: str | None = None,
    span: tuple[int | None, int | None] = (None, None),
) -> dict[str, Any]:
    """Provenance fields for a row grounded in `chunk_ids` (first is primary)."""
    chunk_ids = [c for c in chunk_ids if c in store.chunks_by_id]
    primary = store.chunks_by_id[chunk_ids[0]] if chunk_ids else None
    section_id = section_id or (primary["section_id"] if primary else None)
    heading, ordinal = store.section_heading(section_id)
    return {
        "section_id": section_id,
        "heading": heading,
        "section_ordinal": ordinal,
        "chunk_id": chunk_ids[0] if chunk_ids else None,
        "char_start": span[0],
        "char_end": span[1],
        "source_chunk_ids": tuple(chunk_ids),
    }
