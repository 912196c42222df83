"""select_quotes: the budget, coverage of every part in proportion, and rank as a shorter summary."""

from __future__ import annotations

from tasks.summaries.select_quotes import Candidate, select_quotes


def _candidates() -> list[Candidate]:
    # Part "a" is three times as long as part "b"; "a" holds the most salient sentences.
    a = [Candidate(i, "a", 1.0 - i / 100, 10) for i in range(9)]
    b = [Candidate(20 + i, "b", 0.1 - i / 100, 10) for i in range(3)]
    return a + b


def test_the_budget_is_met_and_not_exceeded_by_more_than_one_sentence():
    chosen = select_quotes(_candidates(), 45)
    assert len(chosen) == 5  # 10 words each: 40 < 45 <= 50


def test_every_part_is_quoted_in_proportion_to_its_length():
    chosen = select_quotes(_candidates(), 40)
    parts = ["a" if p < 20 else "b" for p in chosen]
    assert parts.count("a") == 3 and parts.count("b") == 1  # 30 of 40 words for the part 3x as long
    # within a part, the most salient sentence comes first
    assert [p for p in chosen if p < 20] == [0, 1, 2]


def test_the_first_quotes_by_rank_are_the_summary_at_a_smaller_budget():
    long = select_quotes(_candidates(), 80)
    for budget in (10, 30, 50):
        short = select_quotes(_candidates(), budget)
        assert long[: len(short)] == short


def test_nothing_to_quote():
    assert select_quotes([], 50) == []
    assert select_quotes(_candidates(), 0) == []
    assert sorted(select_quotes(_candidates(), 10_000)) == sorted(c.position for c in _candidates())
