"""Entity arcs on the bundled screenplay: an arc question naming two characters gets the first two
scenes they share (the last two for an end) and the shared scene that tells each moment it
describes; the planner asks for the arc only where graph tools are allowed, and the places it picks
reach the final evidence."""

from __future__ import annotations

import pytest

from schemas.config import load_settings
from tasks.query.answer_nkw import answer_nkw
from tasks.query.plan import decompose, follow_up_plan
from tasks.query.tools.entity_arc import arc_points, entity_arc_search, shared_sections
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.registry import GRAPH_TOOLS, TOOLS, call_tool

ARC = (
    "How does Margaret's relationship with Daniel evolve from their first meeting "
    "to the dawn on the cliff path?"
)


@pytest.fixture
def env(screenplay_env) -> ToolEnv:
    return screenplay_env


def _characters(env: ToolEnv, question: str) -> list[str]:
    ids = decompose(env, question).entity_ids
    return [e for e in ids if env.store.entities_by_id[e]["entity_type"] == "character"]


def test_the_moments_of_an_arc_are_read_from_the_question():
    assert arc_points(ARC) == ["their first meeting", "the dawn on the cliff path"]
    assert arc_points(
        "How does Clay's bond with Myers evolve from their initial interaction through the rooftop mission?"
    ) == ["their initial interaction", "the rooftop mission"]
    assert arc_points("从两人重逢到最终行动，张鹏与刘培强的关系如何演进？") == ["两人重逢", "最终行动"]
    assert arc_points("Why does Margaret keep the key?") == []


def test_a_moment_ends_at_its_comma_but_a_bracketed_heading_is_whole():
    assert arc_points(
        "What role holds from the temple battle to the river confrontation, based on their actions?"
    ) == ["the temple battle", "the river confrontation"]
    assert arc_points(
        "From early conflicts in the music room to later rehearsal, how did De Sean and Roberta evolve?"
    ) == ["early conflicts in the music room", "later rehearsal"]
    assert arc_points(
        "From [24, INT. BRIAN'S BEDROOM - NIGHT] to [138, EXT. ROBERTA'S BROWNSTONE - DAY], how?"
    ) == ["[24, INT. BRIAN'S BEDROOM - NIGHT]", "[138, EXT. ROBERTA'S BROWNSTONE - DAY]"]
    assert arc_points("从[14、阳台上，日，外]到[58、小河，日，外]，两人的关系如何变化？") == [
        "[14、阳台上，日，外]",
        "[58、小河，日，外]",
    ]


def test_an_arc_picks_the_first_two_shared_scenes_and_the_one_that_tells_each_moment(env):
    characters = _characters(env, ARC)
    names = {env.store.entities_by_id[e]["name"] for e in characters}
    assert names == {"Margaret Hale", "Daniel Pryce"}
    shared = shared_sections(env, characters)
    assert len(shared) >= 3
    rows = entity_arc_search(env, characters, ARC)
    # The first scene both are named in is often a mention before they meet: the next one as well.
    assert [r.section_id for r in rows if r.extra["arc"] == "first"] == shared[:2]
    assert {r.section_id for r in rows} <= set(shared)  # only scenes both are in
    cliff = [r for r in rows if r.extra["moment"] == "the dawn on the cliff path"]
    assert cliff and "CLIFF PATH" in (cliff[0].heading or ""), [r.heading for r in rows]
    for row in rows:  # each row grounded in a chunk of its own scene, one row per scene
        assert env.store.chunks_by_id[row.chunk_id]["section_id"] == row.section_id
        assert row.channel == "graph"
    assert len({r.section_id for r in rows}) == len(rows)


def test_an_arc_to_the_end_picks_the_last_two_shared_scenes_latest_first(env):
    question = "How does Margaret's relationship with Daniel change from the harbour to their final scene?"
    characters = _characters(env, question)
    shared = shared_sections(env, characters)
    rows = entity_arc_search(env, characters, question)
    assert [r.section_id for r in rows if r.extra["arc"] == "last"] == shared[-2:][::-1]


def test_an_arc_of_characters_that_never_meet_or_of_no_one_is_empty(env):
    assert entity_arc_search(env, [], ARC) == []
    assert entity_arc_search(env, ["ent_not_there"], ARC) == []


def test_the_planner_asks_for_the_arc_only_where_graph_tools_are_allowed(env):
    intents = decompose(env, ARC)
    assert intents.shape is not None and intents.shape.kind == "arc"
    everything = set(TOOLS)
    plan = follow_up_plan(env, intents, 1, [], everything, 5)
    arcs = [args for tool, args in plan if tool == "entity_arc_search"]
    assert arcs and set(arcs[0]["entity_ids"]) == set(_characters(env, ARC))
    assert "entity_arc_search" in GRAPH_TOOLS
    without_graph = follow_up_plan(env, intents, 1, [], everything - GRAPH_TOOLS, 5)
    assert all(tool != "entity_arc_search" for tool, _ in without_graph)


def test_the_arc_is_a_traced_tool_and_its_scenes_reach_the_final_evidence(env):
    characters = _characters(env, ARC)
    call = call_tool(env, "entity_arc_search", {"entity_ids": characters, "query": ARC}, 1)
    assert call.error is None and call.rows
    refused = call_tool(env, "entity_arc_search", {"entity_ids": [], "query": ARC}, 1)
    assert refused.error and not refused.rows
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    answer = answer_nkw(env, ARC, None, settings.answer, settings.retrieval)
    assert any(c["tool"] == "entity_arc_search" and c["round"] == 1 for c in answer.trace)
    evidence_chunks = {e.chunk_id for e in answer.evidence}
    assert {r.chunk_id for r in call.rows} <= evidence_chunks
