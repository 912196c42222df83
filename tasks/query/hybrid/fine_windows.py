"""The fine-window hybrid baseline's retrieval: consecutive sentences of one section grouped into
windows of about 40 words, ranked by BM25 and dense scores (the window's own vector, or its best
sentence's) fused by reciprocal rank, and taken in rank order up to the 450-word hybrid's
source-token budget."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from schemas.ids import make_id
from tasks.query.hybrid.retrieve import reciprocal_rank_fusion
from tasks.query.store.ranking import top_positions
from tasks.query.store.bm25 import Bm25Index
from tasks.text import count_tokens, count_words

# Chosen by a sweep on the STAGE dev set (docs/evaluation.md, "Baselines"; benchmarks/
# sweep_fine_windows.py): window words 30/40/60 against rrf_k 5 to 100; never tuned on the corpus.
WINDOW_WORDS = 40
FINE_RRF_K = 10
# Windows are ~10x as many as chunks and ~40 of them fill the budget: each retriever offers
# enough candidates that fusion can reach past the first budget's worth.
FINE_CANDIDATES = 200


@dataclass(frozen=True)
class FineWindows:
    """One document's windows, by position: window w holds sentences starts[w]..ends[w]-1."""

    window_ids: list[str]
    starts: np.ndarray
    ends: np.ndarray
    chunk_ids: list[str]  # the chunk of the window's first sentence (evidence rows point at it)
    section_ids: list[str]
    texts: list[str]
    n_tokens: np.ndarray
    bm25: Bm25Index
    # Each window's own text embedded, unit length (`with_vectors`); None scores a window by its best
    # sentence's vector instead.
    vectors: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.window_ids)


def window_spans(section_ids: Sequence[str], words: Sequence[int], size: int) -> list[tuple[int, int]]:
    """[start, end) runs of consecutive sentences, one section each, closed once they reach
    `size` words; a section's short tail (under half a window) joins the window before it."""
    spans: list[tuple[int, int]] = []
    start, total = 0, 0
    for position in range(len(section_ids)):
        if position > start and section_ids[position] != section_ids[start]:
            spans.append((start, position))
            start, total = position, 0
        total += int(words[position])
        if total >= size:
            spans.append((start, position + 1))
            start, total = position + 1, 0
    if start < len(section_ids):
        spans.append((start, len(section_ids)))
    merged: list[tuple[int, int]] = []
    for span in spans:
        previous = merged[-1] if merged else None
        tail_words = sum(int(w) for w in words[span[0] : span[1]])
        if (
            previous is not None
            and section_ids[previous[0]] == section_ids[span[0]]
            and tail_words < size / 2
        ):
            merged[-1] = (previous[0], span[1])
        else:
            merged.append(span)
    return merged


def sentence_line(text: str, speaker: object) -> str:
    """A sentence as the window shows it: dialogue keeps its speaker cue, as the script does."""
    return f"{speaker}: {text}" if isinstance(speaker, str) and speaker else str(text)


def build_windows(sentences: pd.DataFrame, language: str, size: int = WINDOW_WORDS) -> FineWindows:
    """The windows of one document's sentences (in reading order) and their BM25 index."""
    texts = sentences["text"].astype(str).tolist()
    section_ids = sentences["section_id"].tolist()
    words = [count_words(t, language) for t in texts]
    lines = [sentence_line(t, s) for t, s in zip(texts, sentences["speaker"].tolist())]
    spans = window_spans(section_ids, words, size)
    sentence_ids = sentences["sentence_id"].tolist()
    chunk_ids = sentences["chunk_id"].tolist()
    window_texts = [" ".join(lines[a:b]) for a, b in spans]
    window_ids = [make_id("win", sentence_ids[a], b - a) for a, b in spans]
    return FineWindows(
        window_ids=window_ids,
        starts=np.array([a for a, _ in spans], dtype=np.int64),
        ends=np.array([b for _, b in spans], dtype=np.int64),
        chunk_ids=[chunk_ids[a] for a, _ in spans],
        section_ids=[section_ids[a] for a, _ in spans],
        texts=window_texts,
        n_tokens=np.array([count_tokens(t) for t in window_texts], dtype=np.int64),
        bm25=Bm25Index.from_texts(window_ids, window_texts, language),
    )


def with_vectors(windows: FineWindows, embed: Callable[[Sequence[str]], np.ndarray] | None) -> FineWindows:
    """`windows` with each window's whole text embedded (unit length). A question often paraphrases
    what a run of lines says together, which no single sentence of it matches."""
    if embed is None or not len(windows):
        return windows
    vectors = np.asarray(embed(windows.texts), dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return replace(windows, vectors=vectors / np.where(norms > 0, norms, 1.0))


def dense_window_scores(
    windows: FineWindows, sentence_vectors: np.ndarray, query_vector: np.ndarray | None
) -> np.ndarray | None:
    """Each window's similarity to the query: its own vector's when it has one, else its best
    sentence's (None without comparable vectors)."""
    if query_vector is None or not len(windows):
        return None
    if windows.vectors is not None and windows.vectors.shape[1] == query_vector.shape[-1]:
        return windows.vectors @ query_vector.reshape(-1)
    if sentence_vectors.shape[1] != query_vector.shape[-1]:
        return None
    similarity = np.einsum("ij,j->i", sentence_vectors, query_vector.reshape(-1))
    # Windows tile the sentences in order, so their starts are reduceat's group starts.
    return np.maximum.reduceat(similarity, windows.starts)


def fine_search(
    windows: FineWindows,
    sentence_vectors: np.ndarray,
    question: str,
    query_vector: np.ndarray | None,
    candidates: int = FINE_CANDIDATES,
    rrf_k: int = FINE_RRF_K,
) -> list[tuple[int, float]]:
    """(window position, fused score) in rank order: RRF over BM25 and dense window rankings."""
    bm25 = windows.bm25.scores(question)
    rankings = [[p for p in top_positions(bm25, candidates) if bm25[p] > 0]]
    dense = dense_window_scores(windows, sentence_vectors, query_vector)
    if dense is not None:
        rankings.append(top_positions(dense, candidates))
    fused = reciprocal_rank_fusion(rankings, rrf_k)
    return sorted(fused.items(), key=lambda item: (-item[1], item[0]))


def within_budget(
    ranked: list[tuple[int, float]], n_tokens: np.ndarray, budget: int
) -> list[tuple[int, float]]:
    """The ranked windows taken in order while they fit in `budget` tokens; one that would pass it
    is skipped for the next that fits, so the baseline spends its whole budget."""
    taken, used = [], 0
    for position, score in ranked:
        size = int(n_tokens[position])
        if used + size <= budget:
            taken.append((position, score))
            used += size
    return taken
