"""Spend the source-token budget the structured evidence leaves unused.

The board's passages are the chunks some tool supports, each cut to a short excerpt; when the
supported chunks run out the packet stops well short of its budget (about 1,150 of 1,800 tokens a
STAGE question), while the fine-window baseline spends all of it. The rest goes to the next places
the text channel ranks: the question's fine windows (the same ranking the baseline uses), each an
excerpt of one chunk that overlaps no passage already chosen. The structure's passages keep their
places; the fill only adds after them, so it never displaces what the walks and the graph found.
"""

from __future__ import annotations

from typing import Iterable, Iterator

import numpy as np

from tasks.query.evidence.board import Passage
from tasks.query.hybrid.fine_windows import FineWindows, fine_search
from tasks.query.store.document_store import NarrativeStore
from tasks.text import count_tokens

FILLED = "text_fill"
MIN_FILL_TOKENS = 12  # a shorter remainder holds no sentence worth reading


def overlaps(passage: Passage, chosen: Iterable[Passage]) -> bool:
    """Whether `passage` shares source text with any chosen passage (offsets are document-wide)."""
    return any(
        passage.char_start < other.char_end and other.char_start < passage.char_end for other in chosen
    )


def fill_budget(chosen: list[Passage], candidates: Iterable[Passage], budget_tokens: int) -> list[Passage]:
    """`chosen` plus the candidates, in their order, that fit in what `budget_tokens` leaves and
    overlap nothing taken; a candidate that does not fit is skipped for the next one that does (as
    the baseline fills its budget). Returned in story order, as `select_passages` returns them."""
    taken = list(chosen)
    remaining = budget_tokens - sum(p.n_tokens for p in chosen)
    for candidate in candidates:
        if remaining < MIN_FILL_TOKENS:
            break
        if candidate.n_tokens > remaining or not candidate.text.strip() or overlaps(candidate, taken):
            continue
        taken.append(candidate)
        remaining -= candidate.n_tokens
    return sorted(taken, key=lambda p: (p.ordinal, p.char_start))


def window_passage(
    store: NarrativeStore, windows: FineWindows, position: int, max_tokens: int
) -> Passage | None:
    """Window `position` as a passage of its first sentence's chunk: its sentences inside that chunk,
    the last ones dropped until the excerpt fits `max_tokens` (the board's longest excerpt)."""
    chunk_id = windows.chunk_ids[position]
    chunk = store.chunks_by_id.get(chunk_id)
    if chunk is None:
        return None
    rows = store.source.sentence_rows
    starts, ends = store.source.sentence_spans
    inside = [
        s
        for s in range(int(windows.starts[position]), int(windows.ends[position]))
        if rows[s]["chunk_id"] == chunk_id
    ]
    offset = int(chunk["char_start"])
    while inside:
        start, end = int(starts[inside[0]]), int(ends[inside[-1]])
        text = chunk["text"][start - offset : end - offset]
        tokens = count_tokens(text)
        if tokens <= max_tokens or len(inside) == 1:
            if tokens > max_tokens:
                return None
            heading, ordinal = store.section_heading(chunk["section_id"])
            return Passage(
                chunk_id,
                chunk["section_id"],
                heading or "",
                ordinal or 0,
                text,
                tokens,
                start,
                end,
                0.0,
                [FILLED],
            )
        inside = inside[:-1]
    return None


def window_candidates(
    store: NarrativeStore,
    windows: FineWindows,
    question: str,
    query_vector: np.ndarray | None,
    max_tokens: int,
) -> Iterator[Passage]:
    """The question's fine windows in the baseline's rank order, as passages (lazily: the fill
    usually stops after a few dozen)."""
    for position, _ in fine_search(windows, store.source.sentence_vectors, question, query_vector):
        passage = window_passage(store, windows, position, max_tokens)
        if passage is not None:
            yield passage
