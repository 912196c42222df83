"""Split sections into retrieval chunks of about `chunk_tokens` tokens; a chunk never
crosses a section boundary, and in screenplays never separates a cue from its dialogue."""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.ids import make_id
from tasks.ingest.screenplay import parse_blocks
from tasks.ingest.split_sentences import split_range
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens


def _cut_points(text: str, start: int, end: int, language: str, kind: str) -> list[int]:
    """Positions where a chunk may start: sentence starts, and for screenplays block starts
    other than dialogue (so a cue stays with its lines)."""
    points: set[int] = set()
    if kind == "screenplay":
        for block in parse_blocks(text, start, end, language):
            if block.kind in ("heading", "action", "cue", "transition"):
                points.add(block.start)
            if block.kind in ("action", "dialogue") and count_tokens(text[block.start : block.end]) > 200:
                # Long blocks may still be cut between sentences.
                points.update(s for s, _, _ in split_range(text, block.start, block.end, language)[1:])
    else:
        points.update(s for s, _, _ in split_range(text, start, end, language))
    return sorted(p for p in points if start < p < end)


def chunk_spans(
    text: str, start: int, end: int, language: str, kind: str, chunk_tokens: int
) -> list[tuple[int, int]]:
    """Contiguous spans covering [start, end), each about `chunk_tokens` tokens or one atom."""
    if count_tokens(text[start:end]) <= chunk_tokens:
        return [(start, end)]
    bounds = [start] + _cut_points(text, start, end, language, kind) + [end]
    spans, chunk_start, tokens = [], start, 0
    for a, b in zip(bounds, bounds[1:]):
        atom_tokens = count_tokens(text[a:b])
        if tokens and tokens + atom_tokens > chunk_tokens:
            spans.append((chunk_start, a))
            chunk_start, tokens = a, 0
        tokens += atom_tokens
    spans.append((chunk_start, end))
    return [piece for s, e in spans for piece in _hard_split(text, s, e, chunk_tokens)]


def _hard_split(text: str, start: int, end: int, chunk_tokens: int) -> list[tuple[int, int]]:
    # An atom with no usable cut point (one enormous sentence) is split on whitespace.
    if count_tokens(text[start:end]) <= 2 * chunk_tokens:
        return [(start, end)]
    pieces, cursor, tokens = [], start, 0
    for position in range(start, end):
        if text[position].isspace() and tokens >= chunk_tokens:
            pieces.append((cursor, position))
            cursor, tokens = position, 0
        elif not text[position].isspace() and (
            position == start or text[position - 1].isspace() or ord(text[position]) > 0x2E80
        ):
            tokens += 1
    pieces.append((cursor, end))
    return pieces


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def chunks_for_document(
    doc_id: str, text: str, language: str, kind: str, sections: pd.DataFrame, chunk_tokens: int
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for section in sections.sort_values("ordinal").itertuples():
        for span_start, span_end in chunk_spans(
            text, section.char_start, section.char_end, language, kind, chunk_tokens
        ):
            s, e = _trim(text, span_start, span_end)
            if e <= s:
                continue
            body = text[s:e]
            rows.append(
                {
                    "chunk_id": make_id("chk", doc_id, s, e),
                    "doc_id": doc_id,
                    "section_id": section.section_id,
                    "ordinal": len(rows) + 1,
                    "text": body,
                    "char_start": s,
                    "char_end": e,
                    "n_tokens": count_tokens(body),
                }
            )
    return rows


def run(ctx: StageContext) -> StageOutput:
    document = ctx.document
    return {
        "chunks": chunks_for_document(
            document.doc_id,
            document.text,
            document.language,
            document.kind,
            ctx.table("sections"),
            ctx.settings.split_chunks.chunk_tokens,
        )
    }
