"""Vectors derived from vectors already embedded, instead of embedding a longer text again.

A chunk is a run of whole sentences, so its vector is the token-weighted mean of its
sentences' vectors, normalised: the same mean pooling the encoder does over a chunk's tokens,
taken per sentence (and never truncated, where the encoder stops at 256 word pieces). The
same holds for any unit made of parts already embedded (e.g. an episode of its units).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np


def group_means(
    groups: Sequence[str], members: Sequence[str], vectors: np.ndarray, weights: Sequence[float]
) -> tuple[np.ndarray, list[int]]:
    """One normalised weighted mean of member vectors per group, in `groups` order, and the
    positions of groups that have no member (their rows are zero: embed those directly).

    `members[i]` names the group of `vectors[i]`, weighted by `weights[i]` (> 0)."""
    dimension = vectors.shape[1] if vectors.ndim == 2 and len(vectors) else 0
    position = {group: row for row, group in enumerate(groups)}
    sums = np.zeros((len(groups), dimension), dtype=np.float64)
    counts = np.zeros(len(groups), dtype=np.int64)
    for vector, group, weight in zip(vectors, members, weights):
        row = position.get(group)
        if row is not None:
            sums[row] += float(weight) * vector.astype(np.float64)
            counts[row] += 1
    norms = np.linalg.norm(sums, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    means = (sums / norms).astype(np.float32)
    return means, [row for row in range(len(groups)) if counts[row] == 0]
