"""Choose the source passages of the final evidence under a token budget: the best
supported chunks first, each cut to a focused excerpt around the sentences that matter."""

from __future__ import annotations

import numpy as np

from tasks.query.evidence.board import Passage
from tasks.query.store.document_store import NarrativeStore
from tasks.text import count_tokens

MIN_PASSAGE_TOKENS = 20
PINNED = "scene_named"
ADJACENT = "scene_adjacent"
WALKED = "episode_walk"
ENTITY_ARC = "entity_arc"


def pin_sections(
    support: dict[str, tuple[float, list[str]]],
    section_ids: list[str],
    chunk_ids_of_section: dict[str, list[str]],
    chunk_scores: dict[str, float],
) -> dict[str, tuple[float, list[str]]]:
    """Support with one chunk of each named section ranked above everything else (the first named
    highest): its best supported chunk, else its best by `chunk_scores`, else its first."""
    pinned = dict(support)
    top = max((score for score, _ in support.values()), default=0.0)
    for rank, section_id in enumerate(section_ids):
        chunk_ids = chunk_ids_of_section.get(section_id) or []
        if not chunk_ids:
            continue
        chunk_id = max(
            chunk_ids,
            key=lambda c: (support.get(c, (0.0, []))[0], chunk_scores.get(c, 0.0), -chunk_ids.index(c)),
        )
        score, sources = pinned.get(chunk_id, (0.0, []))
        pinned[chunk_id] = (top + len(section_ids) - rank, [PINNED, *sources])
    return pinned


def _sentence_scores(
    store: NarrativeStore, positions: np.ndarray, question: str, query_vector: np.ndarray | None
) -> np.ndarray:
    source = store.source
    lexical = source.sentence_bm25.scores(question)[positions]
    top = float(lexical.max()) if lexical.size else 0.0
    scores = lexical / top if top > 0 else lexical
    if query_vector is not None and source.sentence_vectors.shape[1] == query_vector.shape[-1]:
        scores = 0.5 * scores + 0.5 * (source.sentence_vectors[positions] @ query_vector)
    return scores


def add_adjacent_scenes(
    support: dict[str, tuple[float, list[str]]],
    directions: list[str],
    section_of_chunk: dict[str, str],
    ordered_sections: list[str],
    chunk_ids_of_section: dict[str, list[str]],
) -> dict[str, tuple[float, list[str]]]:
    """Support with a chunk of the scene just before / after the best supported chunk's scene
    ranked second. "What happens just before X?" is answered where X happens and in the scene
    before it, whose words share little with the question: the retrievers find X, not its
    neighbour. The chunk nearest the boundary unless the neighbour scene is already supported."""
    if not support:
        return support
    ranked = sorted(support.items(), key=lambda item: -item[1][0])
    anchor = section_of_chunk.get(ranked[0][0])
    if anchor not in ordered_sections:
        return support
    second = ranked[1][1][0] if len(ranked) > 1 else 0.0
    place = ordered_sections.index(anchor)
    added = dict(support)
    for direction in directions:
        step = -1 if direction == "before" else 1
        if not 0 <= place + step < len(ordered_sections):
            continue
        chunk_ids = chunk_ids_of_section.get(ordered_sections[place + step]) or []
        if not chunk_ids:
            continue
        supported = [c for c in chunk_ids if c in support]
        chunk_id = (
            max(supported, key=lambda c: support[c][0]) if supported else chunk_ids[-1 if step < 0 else 0]
        )
        score, sources = added.get(chunk_id, (0.0, []))
        added[chunk_id] = (max(score, second + 1e-3), [ADJACENT, *sources])
    return added


def lift_walked(
    support: dict[str, tuple[float, list[str]]], chunk_ids: list[str], label: str = WALKED
) -> dict[str, tuple[float, list[str]]]:
    """Support with the chunks an episode walk (or an entity arc) placed (anchors of the described
    events, then the episode reached) ranked just below the best supported chunk, in the walk's
    order: they are the places a question's own words do not reach as a whole, so they must not
    compete with them."""
    if not chunk_ids:
        return support
    ranked = sorted((score for score, _ in support.values()), reverse=True)
    second = ranked[1] if len(ranked) > 1 else (ranked[0] if ranked else 0.0)
    lifted = dict(support)
    for rank, chunk_id in enumerate(dict.fromkeys(chunk_ids)):
        score, sources = lifted.get(chunk_id, (0.0, []))
        lifted[chunk_id] = (max(score, second + 1e-3 * (len(chunk_ids) - rank)), [label, *sources])
    return lifted


def excerpt(
    store: NarrativeStore,
    chunk_id: str,
    question: str,
    query_vector: np.ndarray | None,
    max_tokens: int,
    focus: list[tuple[int, int]] | None = None,
) -> tuple[int, int, str, int]:
    """(start, end, text, tokens) of the most relevant contiguous stretch of a chunk."""
    chunk = store.chunks_by_id[chunk_id]
    if chunk["n_tokens"] <= max_tokens:
        return int(chunk["char_start"]), int(chunk["char_end"]), chunk["text"], int(chunk["n_tokens"])
    positions = store.sentences_of_chunk.get(chunk_id, np.zeros(0, dtype=np.int64))
    if positions.size == 0:
        text = chunk["text"]
        return int(chunk["char_start"]), int(chunk["char_end"]), text, count_tokens(text)
    scores = _sentence_scores(store, positions, question, query_vector)
    all_starts, all_ends = store.source.sentence_spans
    starts, ends = all_starts[positions], all_ends[positions]
    for span_start, span_end in focus or []:
        scores = scores + 0.3 * ((starts < span_end) & (span_start < ends))
    tokens = store.sentence_tokens[positions]
    best = int(np.argmax(scores))
    low = high = best
    used = int(tokens[best])
    # Grow the window towards the better neighbour until the budget is spent.
    while True:
        left = scores[low - 1] if low > 0 else -np.inf
        right = scores[high + 1] if high + 1 < positions.size else -np.inf
        if left == -np.inf and right == -np.inf:
            break
        step = low - 1 if left >= right else high + 1
        if used + tokens[step] > max_tokens:
            break
        used += int(tokens[step])
        low, high = min(low, step), max(high, step)
    start, end = int(starts[low]), int(ends[high])
    text = chunk["text"][start - int(chunk["char_start"]) : end - int(chunk["char_start"])]
    return start, end, text, count_tokens(text)


def select_passages(
    store: NarrativeStore,
    support: dict[str, tuple[float, list[str]]],
    question: str,
    query_vector: np.ndarray | None,
    budget_tokens: int,
    max_passage_tokens: int,
    focus: dict[str, list[tuple[int, int]]] | None = None,
) -> list[Passage]:
    """Passages in support order until the budget is spent, then returned in story order."""
    ranked = sorted(support.items(), key=lambda item: (-item[1][0], store.chunk_position.get(item[0], 0)))
    passages: list[Passage] = []
    remaining = budget_tokens
    for chunk_id, (score, sources) in ranked:
        if remaining < MIN_PASSAGE_TOKENS or chunk_id not in store.chunks_by_id:
            continue
        start, end, text, tokens = excerpt(
            store,
            chunk_id,
            question,
            query_vector,
            min(max_passage_tokens, remaining),
            (focus or {}).get(chunk_id),
        )
        if tokens > remaining or not text.strip():
            continue
        chunk = store.chunks_by_id[chunk_id]
        heading, ordinal = store.section_heading(chunk["section_id"])
        passages.append(
            Passage(
                chunk_id,
                chunk["section_id"],
                heading or "",
                ordinal or 0,
                text,
                tokens,
                start,
                end,
                round(score, 6),
                sources[:6],
            )
        )
        remaining -= tokens
    return sorted(passages, key=lambda p: (p.ordinal, p.char_start))
