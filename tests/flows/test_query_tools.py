"""Every query-time tool on the bundled samples built with all stages: rows carry provenance
back to a real section and chunk, and no tool errors on typical questions."""

from __future__ import annotations

import pytest

from tasks.query.tools.env import ToolEnv
from tasks.query.tools.registry import TOOLS, call_tool, function_schemas


@pytest.fixture
def env(screenplay_env) -> ToolEnv:
    return screenplay_env


def _character(env: ToolEnv, name: str) -> str:
    entities = env.store.table("entities")
    match = entities[
        (entities["entity_type"] == "character") & entities["name"].str.contains(name, case=False)
    ]
    assert not match.empty, name
    return match.iloc[0]["entity_id"]


def test_every_tool_returns_grounded_rows(env):
    margaret, tom = _character(env, "Margaret"), _character(env, "Tom")
    calls = {
        "hybrid_evidence_search": {"query": "brass key", "top_k": 3},
        "section_search": {"query": "harbour office"},
        "atomic_fact_search": {"query": "the storm warning", "top_k": 5},
        "vdb_search_sentences": {"query": "the lamp is lit", "top_k": 5},
        "bm25_search_docs": {"query": "tobacco tin", "top_k": 3},
        "source_lookup": {"chunk_ids": [env.store.source.chunks["chunk_id"].iloc[2]]},
        "entity_lookup": {"entity_id": margaret, "query": "Who is Margaret?"},
        "entity_search": {"query": "Margaret and Tom", "top_k": 4},
        "relation_search": {"query": "brother and sister", "entity_ids": [margaret, tom]},
        "top_k_by_centrality": {"k": 3},
        "entity_arc_search": {"entity_ids": [margaret, tom], "query": "Margaret and Tom, from first to last"},
        "narrative_trace_search": {"query": "the storm warning is hidden", "direction": "after"},
        "narrative_semantic_search": {"query": "the shipwreck rescue", "top_k": 5},
        "narrative_sql_search": {"query_name": "dialogue_by_speaker", "entity_id": margaret, "limit": 5},
        "episode_walk_search": {"query": "What happens just before Ellis locks the key in his drawer?"},
        "chunk_mapping": {"section_ordinal": 2},
        "summary_search": {"query": "What is the plot of the story?", "kind": "work", "words": 120},
    }
    assert set(calls) == set(TOOLS)
    sections = set(env.store.source.sections["section_id"])
    for name, arguments in calls.items():
        call = call_tool(env, name, arguments, 0)
        assert call.error is None, (name, call.error)
        assert call.rows, name
        assert call.rows[0].channel == TOOLS[name].channel  # entity_lookup also returns the entity's facts
        for row in call.rows:
            assert row.text
            if name != "chunk_mapping":
                assert row.section_id in sections and row.heading, (name, row)
                assert row.chunk_id in env.store.chunks_by_id, (name, row)


def test_centrality_puts_main_characters_first(env):
    names = [row.extra["name"] for row in call_tool(env, "top_k_by_centrality", {"k": 3}, 0).rows]
    assert any(n.upper().startswith(("MARGARET", "TOM")) for n in names)


def test_structured_lookups_are_fixed_queries(env):
    margaret, tom = _character(env, "Margaret"), _character(env, "Tom")
    between = call_tool(
        env,
        "narrative_sql_search",
        {"query_name": "interactions_between", "entity_id": margaret, "other_entity_id": tom},
        0,
    )
    assert between.error is None and between.rows
    appearances = call_tool(
        env, "narrative_sql_search", {"query_name": "entity_appearances", "entity_id": tom}, 0
    )
    ordinals = [row.section_ordinal for row in appearances.rows]
    assert ordinals == sorted(ordinals) and len(ordinals) >= 4
    free_sql = call_tool(env, "narrative_sql_search", {"query_name": "SELECT * FROM entities"}, 0)
    assert free_sql.error and not free_sql.rows


def test_invalid_arguments_are_reported_not_raised(env):
    assert "invalid arguments" in call_tool(env, "entity_search", {"query": "x", "top_k": 99}, 1).error
    assert "invalid arguments" in call_tool(env, "entity_search", {"query": "x", "colour": "red"}, 1).error
    assert "not JSON" in call_tool(env, "entity_search", "{oops", 1).error
    assert "unknown or disabled" in call_tool(env, "drop_tables", {}, 1).error
    assert (
        "unknown or disabled"
        in call_tool(env, "entity_search", {"query": "x"}, 1, allowed={"bm25_search_docs"}).error
    )


def test_function_schemas_cover_the_allowed_tools():
    schemas = function_schemas({"entity_search", "bm25_search_docs"})
    assert {s["function"]["name"] for s in schemas} == {"entity_search", "bm25_search_docs"}
    entity = next(s for s in schemas if s["function"]["name"] == "entity_search")
    assert entity["function"]["parameters"]["properties"]["top_k"]["maximum"] == 20
    assert len(function_schemas()) == len(TOOLS)


def test_each_tool_is_described_to_the_model_in_whole_sentences():
    # The description is the docstring's first paragraph, not its first line cut mid-sentence.
    for schema in function_schemas():
        description = schema["function"]["description"]
        assert description.endswith("."), (schema["function"]["name"], description)
        assert "\n" not in description and "  " not in description
    assert "storylines that contain it" in TOOLS["narrative_trace_search"].description


def test_a_scene_named_in_the_question_gives_a_passage(env):
    from schemas.config import AnswerSettings, RetrievalSettings
    from tasks.query.answer_nkw import answer_nkw

    scenes = [r for r in env.store.source.section_rows if r["section_kind"] != "preamble" and r["text"]]
    named, other = scenes[1], scenes[-1]
    # The question's words point at another scene; the budget holds about one passage.
    body = " ".join(other["text"].split()[:25])
    answer = answer_nkw(
        env,
        f"In [{named['heading']}], why: {body}?",
        None,
        AnswerSettings(source_token_budget=60),
        RetrievalSettings(),
    )
    assert answer.board["source_tokens"] <= 60
    assert named["section_id"] in {e.section_id for e in answer.evidence}


def test_summary_search_answers_from_the_hierarchy_in_story_order(env):
    plot = call_tool(env, "summary_search", {"query": "What is the plot?", "kind": "work", "words": 150}, 1)
    work = env.store.summaries_of("work").iloc[0]
    assert {r.item_id for r in plot.rows} <= set(work["sentence_ids"])
    assert all(r.extra["level"] == "work" for r in plot.rows)
    starts = [r.char_start for r in plot.rows]
    assert starts == sorted(starts) and sum(len(r.text.split()) for r in plot.rows) >= 150
    # The first quotes by rank: a longer answer adds quotes, it never swaps the first ones out.
    longer = call_tool(env, "summary_search", {"query": "What is the plot?", "kind": "work", "words": 300}, 1)
    assert {r.item_id for r in plot.rows} < {r.item_id for r in longer.rows}
    who = call_tool(
        env, "summary_search", {"query": "Who is Tom in the story?", "kind": "character", "words": 80}, 1
    )
    assert who.rows and any("TOM" in r.text.upper() for r in who.rows)
    assert all(r.extra["level"] == "sentences" for r in who.rows)
