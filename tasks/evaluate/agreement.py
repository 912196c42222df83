"""Agreement of repeated stochastic judgments (paper appendix B.3): mean pairwise agreement over
the C(n,2) vote pairs of each item, and Krippendorff's alpha for nominal labels.

Items are lists of labels (one per vote); None marks a missing vote (a failed judge call) and is
left out, as in Krippendorff's treatment of missing values."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Hashable, Sequence

Item = Sequence[Hashable | None]


def pairwise_agreement(items: Sequence[Item]) -> float | None:
    """Mean over items (with two or more votes) of the share of agreeing vote pairs."""
    shares = []
    for item in items:
        votes = [v for v in item if v is not None]
        pairs = list(combinations(votes, 2))
        if pairs:
            shares.append(sum(a == b for a, b in pairs) / len(pairs))
    return sum(shares) / len(shares) if shares else None


def krippendorff_alpha_nominal(items: Sequence[Item]) -> float | None:
    """Krippendorff's alpha (nominal) from the coincidence matrix; None when it is undefined
    (fewer than two pairable values, or one label only: no expected disagreement)."""
    coincidences: Counter = Counter()
    for item in items:
        votes = [v for v in item if v is not None]
        m = len(votes)
        if m < 2:
            continue  # an item needs two values to be pairable
        counts = Counter(votes)
        for c, n_c in counts.items():
            for k, n_k in counts.items():
                pairs = n_c * (n_k - 1) if c == k else n_c * n_k
                coincidences[(c, k)] += pairs / (m - 1)
    n_c: Counter = Counter()
    for (c, _), value in coincidences.items():
        n_c[c] += value
    n = sum(n_c.values())
    if n <= 1:
        return None
    observed = sum(v for (c, k), v in coincidences.items() if c != k)
    expected_pairs = n * n - sum(v * v for v in n_c.values())  # sum over c != k of n_c * n_k
    if expected_pairs == 0:
        return None
    # alpha = 1 - D_o / D_e with D_o = observed / n and D_e = expected_pairs / (n (n - 1)).
    return 1.0 - (n - 1) * observed / expected_pairs


def majority(votes: Sequence[bool | None]) -> bool | None:
    """The majority label of the votes cast (ties count as incorrect: the judge is conservative)."""
    cast = [v for v in votes if v is not None]
    if not cast:
        return None
    return sum(cast) * 2 > len(cast)
