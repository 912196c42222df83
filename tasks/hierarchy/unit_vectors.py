"""Vectors of narrative units and of episodes for the hierarchy stages' semantic signals.

With `[assemble_episodes] unit_vectors = "derived"` (the default) a unit whose description
quotes the source sentences of its span (offline: every event, every dialogue interaction) gets
a vector derived from those sentences' vectors and its remaining words
(tasks.index.grounded_vectors); occasions, which quote nothing, are embedded. With
`[relate_episodes] episode_vectors = "units"` (the default) an episode's vector is the
token-weighted mean of its units' vectors, as embed_assets derives it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from tasks.embeddings import Embedder
from tasks.hierarchy.units import Unit
from tasks.index.derived_vectors import group_means
from tasks.index.grounded_vectors import SentenceVectors, grounded_vectors
from tasks.text import count_tokens


def unit_text(unit: Unit) -> str:
    """The text that stands for a unit in similarity (its description, else its type)."""
    return unit.description or unit.unit_type


def unit_vectors(
    units: Sequence[Unit], sentences: SentenceVectors | None, embedder: Embedder, derive: bool
) -> np.ndarray:
    """One L2-normalised vector per unit, in order: derived from the sentences its span covers
    when `derive` (and the document's sentence vectors are at hand), else its text embedded."""
    texts = [unit_text(u) for u in units]
    if not derive or sentences is None:
        return embedder.embed(texts)
    candidates = [sentences.covering(u.char_start, u.char_end) if u.char_end >= 0 else [] for u in units]
    return grounded_vectors(texts, candidates, sentences, embedder)


def episode_vectors(
    episode_ids: Sequence[str],
    members: Mapping[str, Sequence[str]],
    vectors: Mapping[str, np.ndarray],
    weights: Mapping[str, float],
) -> tuple[np.ndarray, list[int]]:
    """Each episode's vector as the weighted, normalised mean of its units' vectors (`members`:
    episode id -> unit ids), and the positions of episodes none of whose units has a vector."""
    pairs = [(e, u) for e in episode_ids for u in members.get(e, ()) if u in vectors]
    if not pairs:
        return np.zeros((len(episode_ids), 0), dtype=np.float32), list(range(len(episode_ids)))
    matrix = np.stack([vectors[u] for _, u in pairs])
    return group_means(list(episode_ids), [e for e, _ in pairs], matrix, [weights[u] for _, u in pairs])


def unit_weights(units: Sequence[Unit]) -> dict[str, float]:
    """Each unit's weight in its episode's mean: the tokens of its text."""
    return {u.unit_id: float(max(count_tokens(unit_text(u)), 1)) for u in units}
