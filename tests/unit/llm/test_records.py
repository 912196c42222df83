"""Compact record helpers: first words and sentences, distinct names, merged context windows,
and the breadth-first order that puts items sharing parts side by side."""

from __future__ import annotations

from tasks.llm.requests.grouped import group_by_shared, order_by_shared
from tasks.llm.requests.records import distinct_names, first_sentences, first_words, merged_windows


def test_first_words_and_sentences_cut_at_word_and_sentence_ends() -> None:
    assert first_words("one two  three four", 3) == "one two three…"
    assert first_words("one two", 3) == "one two"
    assert first_words("程勇走进药店，看见了老板。", 5) == "程勇走进药…"
    text = "Nadia arrives from Russia. She speaks no English. She smokes."
    assert first_sentences(text, 8) == "Nadia arrives from Russia. She speaks no English."
    assert first_sentences(text, 3) == "Nadia arrives from…"  # a first sentence longer than the limit is cut


def test_distinct_names_drop_the_name_itself_and_case_variants() -> None:
    assert distinct_names("John Buckingham", ["JOHN BUCKINGHAM", "John", "john", "Mr. Buckingham"]) == [
        "John",
        "Mr. Buckingham",
    ]


def test_overlapping_context_windows_are_merged() -> None:
    assert merged_windows([(50, 55), (10, 14), (20, 25)], 100, 5) == [(5, 30), (45, 60)]
    assert merged_windows([(0, 3), (97, 100)], 100, 10) == [(0, 13), (87, 100)]


def test_items_sharing_parts_become_neighbours_and_share_requests() -> None:
    items = [
        ("ab", ("a", "b")),
        ("cd", ("c", "d")),
        ("ae", ("a", "e")),
        ("ce", ("c", "e")),
        ("xy", ("x", "y")),
    ]
    ordered = order_by_shared(items)
    assert sorted(ordered) == sorted(items)  # the same items, none lost or added
    assert [i for i, _ in ordered] == ["ab", "ae", "ce", "cd", "xy"]
    cost = dict.fromkeys("abcdexy", 10)
    assert group_by_shared(ordered, cost, 50, 8) == [["ab", "ae", "ce", "cd"], ["xy"]]
    assert len(group_by_shared(items, cost, 50, 8)) == 2  # in the given order "ce" repeats c and e
