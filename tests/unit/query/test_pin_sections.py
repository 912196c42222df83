"""A scene the question names gives a passage ahead of everything the retrievers found."""

from __future__ import annotations

from tasks.query.evidence.passages import PINNED, pin_sections


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


def adjacent(support, directions):
    from tasks.query.evidence.passages import add_adjacent_scenes

    of_section = {"S1": ["a", "b"], "S2": ["c", "d"], "S3": ["e", "f"]}
    section_of = {c: s for s, chunks in of_section.items() for c in chunks}
    return add_adjacent_scenes(support, directions, section_of, ["S1", "S2", "S3"], of_section)


def test_scene_before_the_best_chunk_gets_its_last_chunk_ranked_second():
    from tasks.query.evidence.passages import ADJACENT

    support = {"c": (3.0, ["chunk:c"]), "f": (1.0, ["chunk:f"])}
    added = adjacent(support, ["before"])
    ranked = sorted(added, key=lambda c: -added[c][0])
    assert ranked[:2] == ["c", "b"] and added["b"][1] == [ADJACENT]
    assert adjacent(support, ["after"])["f"][0] > 1.0  # next scene already supported: that chunk rises
    both = adjacent(support, ["before", "after"])
    assert {"b", "f"} <= set(both) and both["c"] == support["c"]


def test_no_neighbour_at_the_story_edges_or_without_support():
    support = {"a": (2.0, ["chunk:a"])}
    assert adjacent(support, ["before"]) == support
    assert adjacent({}, ["after"]) == {}
