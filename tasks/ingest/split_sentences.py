"""Split sections into sentences (en and zh); dialogue sentences carry their speaker."""

from __future__ import annotations

import bisect
import re
from typing import Any

import pandas as pd

from schemas.ids import make_id
from tasks.ingest.screenplay import parse_blocks
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens, normalize_space

ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr vs etc mt capt col gen lt sgt prof rev hon no fig approx".split()
)
EN_BOUNDARY = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s+[\"'“‘(\[]?[A-Z0-9])|\n[ \t]*\n")
ZH_BOUNDARY = re.compile(r"[。！？!?；…]+[”’」』\"]*|\n")
MAX_SENTENCE_TOKENS = 120

Span = tuple[int, int, str | None]


def split_range(text: str, start: int, end: int, language: str, speaker: str | None = None) -> list[Span]:
    """Sentence spans inside [start, end), whitespace-trimmed, in order."""
    pattern = ZH_BOUNDARY if language == "zh" else EN_BOUNDARY
    segment = text[start:end]
    cuts = [0]
    for match in pattern.finditer(segment):
        if language != "zh" and match.group().startswith((".",)) and _is_abbreviation(segment, match.start()):
            continue
        cuts.append(match.end())
    cuts.append(len(segment))
    spans: list[Span] = []
    for a, b in zip(cuts, cuts[1:]):
        for s, e in _cap_length(segment, a, b):
            piece = segment[s:e]
            if piece.strip():
                lead = len(piece) - len(piece.lstrip())
                trail = len(piece) - len(piece.rstrip())
                spans.append((start + s + lead, start + e - trail, speaker))
    return spans


def _is_abbreviation(segment: str, dot: int) -> bool:
    word = re.search(r"([A-Za-z]+)$", segment[:dot])
    if not word:
        return False
    token = word.group(1)
    return token.lower() in ABBREVIATIONS or (len(token) == 1 and token.isupper())


def _cap_length(segment: str, a: int, b: int) -> list[tuple[int, int]]:
    # Run-on text (no punctuation for a long stretch) is cut at line breaks, then hard.
    if count_tokens(segment[a:b]) <= MAX_SENTENCE_TOKENS:
        return [(a, b)]
    pieces, cursor = [], a
    for match in re.finditer(r"\n|[;:]\s", segment[a:b]):
        cut = a + match.end()
        if count_tokens(segment[cursor:cut]) >= MAX_SENTENCE_TOKENS // 2:
            pieces.append((cursor, cut))
            cursor = cut
    pieces.append((cursor, b))
    return [p for p in pieces if p[1] > p[0]]


def sentence_spans(text: str, start: int, end: int, language: str, kind: str) -> list[Span]:
    """Sentences of one section: for screenplays, the heading, action and dialogue sentences."""
    if kind != "screenplay":
        return split_range(text, start, end, language)
    spans: list[Span] = []
    for block in parse_blocks(text, start, end, language):
        if block.kind == "heading":
            spans.append((block.start, block.end, None))
        elif block.kind in ("action", "dialogue"):
            spans.extend(split_range(text, block.start, block.end, language, block.speaker))
    return spans


def sentences_for_document(
    doc_id: str, text: str, language: str, kind: str, sections: pd.DataFrame, chunks: pd.DataFrame
) -> list[dict[str, Any]]:
    """Sentence rows, each assigned to the chunk that contains its start."""
    rows: list[dict[str, Any]] = []
    by_section = {sid: group.sort_values("char_start") for sid, group in chunks.groupby("section_id")}
    ordinal = 0
    for section in sections.sort_values("ordinal").itertuples():
        section_chunks = by_section.get(section.section_id)
        if section_chunks is None or section_chunks.empty:
            continue
        starts = section_chunks["char_start"].tolist()
        chunk_ids = section_chunks["chunk_id"].tolist()
        for start, end, speaker in sentence_spans(text, section.char_start, section.char_end, language, kind):
            chunk_index = max(0, bisect.bisect_right(starts, start) - 1)
            ordinal += 1
            rows.append(
                {
                    "sentence_id": make_id("snt", doc_id, start, end),
                    "doc_id": doc_id,
                    "chunk_id": chunk_ids[chunk_index],
                    "section_id": section.section_id,
                    "ordinal": ordinal,
                    "text": normalize_space(text[start:end]),
                    "speaker": speaker,
                    "char_start": start,
                    "char_end": end,
                }
            )
    return rows


def run(ctx: StageContext) -> StageOutput:
    document = ctx.document
    return {
        "sentences": sentences_for_document(
            document.doc_id,
            document.text,
            document.language,
            document.kind,
            ctx.table("sections"),
            ctx.table("chunks"),
        )
    }
