"""Ranking helpers shared by every index of the store and the hybrid retrievers."""

from __future__ import annotations

import numpy as np


def top_positions(scores: np.ndarray, k: int) -> list[int]:
    """Positions of the k highest scores, ties broken by position (stable, deterministic)."""
    if scores.size == 0:
        return []
    order = np.lexsort((np.arange(scores.size), -scores))
    return [int(i) for i in order[:k]]
