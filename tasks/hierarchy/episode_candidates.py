"""Candidate episode pairs for relation prediction, bounded per episode (never all pairs).

Signals (paper §3.2): source order, shared participants, shared graph neighbours, lexical
similarity and embedding similarity. Each signal proposes at most a constant number of
partners per episode through an inverted index or a window, so the proposals are O(n·k);
the proposals are then scored and accepted greedily while both endpoints have fewer than
`max_candidates_per_episode` pairs. Adjacent episodes are always paired first: they carry
the story's order.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

PRIOR_WEIGHTS = {"order": 0.30, "participants": 0.30, "graph": 0.10, "lexical": 0.15, "embedding": 0.15}
MAX_TERM_EPISODES = 12  # terms shared by more episodes are too common to propose pairs
MAX_NEIGHBOURS = 8  # strongest graph neighbours per participant used to propose pairs
EMBED_BLOCK = 256  # rows per block of the similarity product (memory stays O(block * n))


@dataclass(frozen=True)
class EpisodeInfo:
    episode_id: str
    position: int  # index in source order (ordinal - 1 when ordinals are dense)
    first: int  # first section ordinal
    last: int
    entities: frozenset[str]  # participants (all types)
    characters: frozenset[str]
    stakes: frozenset[str]
    terms: frozenset[str]
    text: str


@dataclass(frozen=True)
class Candidate:
    a: int  # position of the earlier episode
    b: int  # position of the later episode
    prior: float
    signals: tuple[tuple[str, float], ...]

    def signal(self, name: str) -> float:
        """One signal's value (0 when the signal did not fire)."""
        return dict(self.signals).get(name, 0.0)


def entity_idf(infos: Sequence[EpisodeInfo]) -> dict[str, float]:
    """Inverse episode frequency of each participant."""
    df = Counter(e for info in infos for e in info.entities)
    return {e: math.log(1.0 + len(infos) / c) for e, c in df.items()}


def weighted_overlap(a: frozenset[str], b: frozenset[str], idf: Mapping[str, float]) -> float:
    """idf mass of a ∩ b over the idf mass of the smaller set (0 when either is empty)."""
    if not a or not b:
        return 0.0
    shared = sum(idf.get(e, 1.0) for e in a & b)
    return shared / min(sum(idf.get(e, 1.0) for e in a), sum(idf.get(e, 1.0) for e in b))


def _term_similarity(a: frozenset[str], b: frozenset[str], idf: Mapping[str, float]) -> float:
    if not a or not b:
        return 0.0
    shared = sum(idf[t] for t in a & b)
    return shared / math.sqrt(sum(idf[t] for t in a) * sum(idf[t] for t in b))


def _after(postings: list[int], position: int, count: int) -> list[int]:
    start = bisect_right(postings, position)
    return postings[start : start + count]


def _embedding_partners(vectors: np.ndarray, k: int) -> dict[int, list[tuple[int, float]]]:
    """Top-k most similar other episodes per episode, computed in row blocks."""
    out: dict[int, list[tuple[int, float]]] = {}
    n = len(vectors)
    if n < 2 or k <= 0:
        return out
    k = min(k, n - 1)
    for start in range(0, n, EMBED_BLOCK):
        sims = vectors[start : start + EMBED_BLOCK] @ vectors.T
        for row, values in enumerate(sims):
            i = start + row
            values[i] = -np.inf
            top = np.argpartition(-values, k - 1)[:k]
            out[i] = sorted(((int(j), float(values[j])) for j in top), key=lambda t: (-t[1], t[0]))
    return out


def propose_pairs(
    infos: Sequence[EpisodeInfo],
    neighbours: Mapping[str, Sequence[str]],
    window: int,
    vectors: np.ndarray | None = None,
    per_signal: int = 4,
) -> dict[tuple[int, int], set[str]]:
    """(earlier, later) positions -> the signals that proposed the pair; O(n · window · signals)."""
    proposed: dict[tuple[int, int], set[str]] = defaultdict(set)

    def add(i: int, j: int, signal: str) -> None:
        if i != j:
            proposed[(min(i, j), max(i, j))].add(signal)

    postings: dict[str, list[int]] = defaultdict(list)
    term_postings: dict[str, list[int]] = defaultdict(list)
    for info in infos:
        for e in info.entities:
            postings[e].append(info.position)
        for t in info.terms:
            term_postings[t].append(info.position)
    for info in infos:
        i = info.position
        for j in range(i + 1, min(len(infos), i + window + 1)):
            add(i, j, "order")
        for e in sorted(info.entities):
            for j in _after(postings[e], i, window):
                add(i, j, "participants")
        for e in sorted(info.characters):
            for q in list(neighbours.get(e, ()))[:MAX_NEIGHBOURS]:
                for j in _after(postings.get(q, []), i, max(1, window // 2)):
                    add(i, j, "graph")
        lexical: Counter = Counter()
        for t in info.terms:
            if len(term_postings[t]) <= MAX_TERM_EPISODES:
                lexical.update(j for j in term_postings[t] if j != i)
        for j, _ in sorted(lexical.items(), key=lambda kv: (-kv[1], kv[0]))[:per_signal]:
            add(i, j, "lexical")
    if vectors is not None:
        for i, partners in _embedding_partners(vectors, per_signal).items():
            for j, _ in partners:
                add(i, j, "embedding")
    return proposed


def score_pair(
    a: EpisodeInfo,
    b: EpisodeInfo,
    idf: Mapping[str, float],
    term_idf: Mapping[str, float],
    graph: Mapping[str, frozenset[str]],
    vectors: np.ndarray | None,
    window: int,
) -> dict[str, float]:
    """Signal values in [0, 1] for one pair (a before b)."""
    gap = b.position - a.position
    neighbours_a = frozenset().union(*(graph.get(e, frozenset()) for e in a.characters)) - a.characters
    return {
        "order": max(0.0, 1.0 - (gap - 1) / window),
        "participants": weighted_overlap(a.entities, b.entities, idf),
        "graph": 1.0 if neighbours_a & b.characters else 0.0,
        "lexical": _term_similarity(a.terms, b.terms, term_idf),
        "embedding": max(0.0, float(vectors[a.position] @ vectors[b.position]))
        if vectors is not None
        else 0.0,
    }


def candidate_pairs(
    infos: Sequence[EpisodeInfo],
    neighbours: Mapping[str, Sequence[str]],
    window: int,
    max_per_episode: int,
    vectors: np.ndarray | None = None,
) -> list[Candidate]:
    """Scored candidate pairs, each episode in at most `max_per_episode` of them, in (a, b) order."""
    proposed = propose_pairs(infos, neighbours, window, vectors)
    idf = entity_idf(infos)
    term_df = Counter(t for info in infos for t in info.terms)
    term_idf = {t: math.log(1.0 + len(infos) / c) for t, c in term_df.items()}
    graph = {e: frozenset(q) for e, q in neighbours.items()}
    scored = []
    for (i, j), sources in proposed.items():
        signals = score_pair(infos[i], infos[j], idf, term_idf, graph, vectors, window)
        prior = sum(PRIOR_WEIGHTS[k] * v for k, v in signals.items())
        scored.append(Candidate(i, j, round(prior, 6), tuple(sorted(signals.items()))))
    # Adjacent pairs first (the story's order), then by prior; ties by position for determinism.
    scored.sort(key=lambda c: (c.b - c.a != 1, -c.prior, c.a, c.b))
    load: Counter = Counter()
    accepted = []
    for c in scored:
        if load[c.a] < max_per_episode and load[c.b] < max_per_episode:
            accepted.append(c)
            load[c.a] += 1
            load[c.b] += 1
    return sorted(accepted, key=lambda c: (c.a, c.b))
