"""A scene the question names gives a passage ahead of everything the retrievers found."""

from __future__ import annotations

from tasks.query.source_passages import PINNED, pin_sections


def test_named_section_chunk_outranks_every_retrieved_chunk_first_named_highest():
    support = {"a1": (3.5, ["chunk:a1"]), "b2": (0.4, ["fact:f"])}
    of_section = {"A": ["a1"], "B": ["b1", "b2"], "C": ["c1", "c2"]}
    pinned = pin_sections(support, ["C", "B"], of_section, {"c1": 0.1, "c2": 2.0})
    ranked = sorted(pinned, key=lambda c: -pinned[c][0])
    # C: no support, its chunk with the better lexical score; B: its chunk already supported.
    assert ranked[:3] == ["c2", "b2", "a1"]
    assert pinned["b2"][1] == [PINNED, "fact:f"] and pinned["a1"] == support["a1"]
    assert support["b2"] == (0.4, ["fact:f"])  # the input is left alone


def test_unknown_or_empty_section_pins_nothing():
    support = {"a1": (1.0, ["chunk:a1"])}
    assert pin_sections(support, ["X"], {"A": ["a1"], "X": []}, {}) == support
    assert pin_sections(support, [], {"A": ["a1"]}, {}) == support
