"""What one item carries into the grouped hierarchy requests: unit lines of an episode, the
one-line episode record of relate / break / storyline requests, and each episode written once
per request."""

from __future__ import annotations

from types import SimpleNamespace

from schemas.config import BreakCyclesSettings, InduceStorylinesSettings, RelateEpisodesSettings
from tasks.hierarchy.episode_llm import UNIT_WORDS, episode_block, telling_units, unit_lines
from tasks.hierarchy.episode_records import MAX_PARTICIPANTS, SUMMARY_WORDS, episode_line
from tasks.hierarchy.relate_llm import relate_requests
from tasks.hierarchy.saber_model import EpisodeEdge, ShortcutQuestion
from tasks.hierarchy.shortcut_requests import shortcut_requests
from tasks.hierarchy.storyline_relations import EpisodeGraph, StorylineInfo
from tasks.hierarchy.storyline_requests import storyline_requests
from tasks.hierarchy.units import Unit


def unit(
    uid: str, ordinal: int, text: str, kind: str = "event", unit_type: str = "action", cue: str = ""
) -> Unit:
    return Unit(uid, kind, 0, ordinal, f"s{ordinal}", 0, (), None, text, unit_type, None, (), (), cue)


def episode(eid: str, ordinal: int, summary: str = "", title: str = "", goal: str = "", people=()):
    return SimpleNamespace(
        episode_id=eid,
        ordinal=ordinal,
        first_ordinal=ordinal,
        last_ordinal=ordinal + 1,
        title=title or f"Title {eid}",
        summary=summary,
        goal=goal,
        participant_ids=list(people),
    )


def test_unit_lines_are_short_and_say_each_thing_once() -> None:
    long = "Margaret climbs the stairs " + "slowly " * 40 + "to the lamp room. She waits."
    units = [
        unit("a", 3, long),
        unit("b", 3, "Ellis tells Margaret about the storm.", "interaction", "inform"),
        unit("c", 3, "Ellis tells Margaret about the storm.", "interaction", "inform"),  # repeated
        unit("d", 4, "The lamp fails.", cue="that night"),
        unit("e", 4, ""),  # nothing to say
    ]
    lines = unit_lines(units, "en")
    assert lines[0] == "(section 3)" and lines[3] == "(section 4)"
    assert lines[1].startswith("- action: Margaret climbs the stairs") and lines[1].endswith("…")
    assert len(lines[1].split()) <= 2 + UNIT_WORDS["en"]
    assert lines[2] == "- inform: Ellis tells Margaret about the storm."
    assert lines[4] == "- action [that night]: The lamp fails."
    assert len(lines) == 5
    one_section = unit_lines(units[:2], "en")
    assert not any(line.startswith("(section") for line in one_section)  # the header gives the section
    block = episode_block(2, units[:2], ["Margaret", "Ellis"], "en")
    assert block.splitlines()[0] == "2. section 3; participants: Margaret, Ellis"


def test_an_episode_line_carries_span_summary_start_goal_and_first_participants() -> None:
    names = {f"p{i}": f"Name{i}" for i in range(9)}
    long = " ".join(f"Sentence {i} tells a part of the episode." for i in range(12))
    row = episode("e1", 3, long, goal="Keep the light burning through the storm.", people=list(names))
    line = episode_line(row, names, "en")
    summary, goal, cast = line.split(" | ")
    assert summary.startswith("(sections 3–4) Sentence 0") and len(summary.split()) <= 2 + SUMMARY_WORDS["en"]
    assert "Title e1" not in line  # the summary says what the title says
    assert goal == "goal: Keep the light burning through the storm."
    assert cast == "with: " + ", ".join(f"Name{i}" for i in range(MAX_PARTICIPANTS))
    bare = episode_line(episode("e2", 5, title="Ann leaves"), {}, "en", participants=False)
    assert bare == "(sections 5–6) Ann leaves"  # no summary: the title; no goal, no participants


def test_relate_and_shortcut_requests_write_each_episode_once() -> None:
    rows = {e: episode(e, i, f"Summary of {e}.") for i, e in enumerate(("a", "b", "c", "d"), start=1)}
    plan = relate_requests(rows, [("a", "b"), ("c", "d"), ("a", "c")], {}, "en", RelateEpisodesSettings())
    assert len(plan.groups) == 1
    values = plan.values(plan.groups[0], "T", "en")
    assert values["episodes"].splitlines()[0] == "E1 (sections 1–2) Summary of a."
    assert all(values["episodes"].count(f"Summary of {e}.") == 1 for e in rows)
    assert sorted(values["pairs"].splitlines()) == ["1. E1 and E2", "2. E1 and E3", "3. E3 and E4"]
    edge = EpisodeEdge("r1", "a", "c", "causes", 0.9)
    hops = (EpisodeEdge("r2", "a", "b", "precedes", 0.9), EpisodeEdge("r3", "b", "c", "causes", 0.9))
    question = ShortcutQuestion(edge, ("a", "b", "c"), hops)
    asked = shortcut_requests([question], rows, "en", BreakCyclesSettings())
    shown = asked.values(asked.groups[0], "T")
    assert shown["questions"] == "1. E1 -[causes]-> E3; path: E1 -[precedes]-> E2 -[causes]-> E3"
    assert shown["episodes"].count("Summary of") == 3 and "with:" not in shown["episodes"]


def test_storyline_items_name_episodes_by_label_and_partners_in_the_request_without_their_chain() -> None:
    rows = {e: episode(e, i, f"Summary of {e}.", people=("ann",)) for i, e in enumerate("abcd", start=1)}
    s1 = StorylineInfo("s1", "S1", ("a", "b"), 1, 3, frozenset({"ann"}), "")
    s2 = StorylineInfo("s2", "S2", ("b", "c", "d"), 2, 5, frozenset({"ann"}), "")
    graph = EpisodeGraph({"a": [("b", 1.0)], "b": [("c", 1.0)], "c": [("d", 1.0)]}, {}, [], {}, {})
    participants = {e: ["ann"] for e in rows}
    plan = storyline_requests(
        [s1, s2],
        rows,
        participants,
        {"ann": "Ann"},
        {"ann": "character"},
        graph,
        "en",
        InduceStorylinesSettings(),
    )
    assert plan.groups == [["s1", "s2"]]
    values = plan.values(["s1", "s2"], "T", "en")
    assert all(values["episodes"].count(f"Summary of {e}.") == 1 for e in rows)
    first = values["storylines"].split("\n\n")[0].splitlines()
    assert first[:2] == ["1. S1: E1 → E2", "characters: Ann"]
    assert first[2].startswith("other S2: ")  # numbered in the same request: no chain repeated
    alone = plan.values(["s1"], "T", "en")["storylines"].splitlines()
    assert alone[2].startswith("other S2 (E2 → E3 → E4): ")


def test_a_long_episode_shows_its_most_telling_units_and_says_how_many_are_left_out() -> None:
    chatter = [
        unit(f"c{i}", 2, f"Small talk number {i} about the weather and the tide today.") for i in range(40)
    ]
    turn = unit("t", 2, "Margaret decides to light the lamp herself.", unit_type="decision")
    units = chatter[:20] + [turn] + chatter[20:]
    units = [Unit(**{**u.__dict__, "index": i}) for i, u in enumerate(units)]
    shown = telling_units(units, "en")
    assert "t" in [u.unit_id for u in shown] and len(shown) < len(units)
    assert [u.index for u in shown] == sorted(u.index for u in shown)  # back in source order
    block = episode_block(1, units, [], "en")
    assert block.endswith(f"({len(units) - len(shown)} less telling units left out)")
    assert "left out" not in episode_block(1, units[:3], [], "en")
