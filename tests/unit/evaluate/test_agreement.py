"""Agreement figures of the judge's votes, checked against the `krippendorff` package."""

from __future__ import annotations

import random

import krippendorff
import numpy as np
import pytest

from tasks.evaluate.agreement import krippendorff_alpha_nominal, majority, pairwise_agreement


def reference_alpha(items):
    data = np.array([[np.nan if v is None else float(v) for v in item] for item in items]).T
    return krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")


@pytest.mark.parametrize("seed,flip", [(0, 0.1), (1, 0.3), (2, 0.5)])
def test_alpha_matches_the_krippendorff_package(seed, flip):
    rng = random.Random(seed)
    items = []
    for _ in range(60):
        truth = rng.random() < 0.6
        items.append([truth if rng.random() >= flip else not truth for _ in range(5)])
    items[4][1] = None  # a failed vote is a missing value
    items[7] = [True, None, None, None, None]  # one vote only: not pairable
    assert krippendorff_alpha_nominal(items) == pytest.approx(reference_alpha(items), abs=1e-12)


def test_pairwise_agreement_over_the_ten_pairs():
    # 4 of 5 agree: pairs among the four (6) agree, the 4 pairs with the odd one disagree -> 6/10.
    assert pairwise_agreement([[True, True, True, True, False]]) == pytest.approx(0.6)
    assert pairwise_agreement([[True] * 5, [True, True, True, True, False]]) == pytest.approx(0.8)
    assert pairwise_agreement([]) is None


def test_alpha_is_undefined_with_one_label_and_majority_is_conservative():
    assert krippendorff_alpha_nominal([[True] * 5, [True] * 5]) is None
    assert krippendorff_alpha_nominal([[True, False]] * 3 + [[True, True]]) == pytest.approx(
        reference_alpha([[True, False]] * 3 + [[True, True]])
    )
    assert majority([True, True, False, None]) is True
    assert majority([True, False]) is False  # a tie is not a majority for correct
    assert majority([None, None]) is None
