"""Query decomposition by the LLM on top of the offline reading, through the fake server."""

from __future__ import annotations

import json

from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.query.agent_loop import request_factory_for
from tasks.query.decompose_llm import make_llm_decomposer
from tasks.query.plan import decompose
from tests.fixtures.llm_fixtures import fast_llm_settings


def _factory(env, question):
    return request_factory_for(env.store.doc_id, env.store.source.language, question)


def test_llm_reading_adds_entities_and_needs(agent_env, fake_llm_server):
    entities = agent_env.store.table("entities")
    nia = entities[entities["name"].str.contains("Nia")].iloc[0]
    fake_llm_server.responder = lambda body: json.dumps(
        {"entities": [nia["name"]], "needs": ["order", "place"], "answer_slot": "where the key was kept"}
    )
    question = "Where was the key kept before she took it?"
    with OpenAICompatibleClient(fast_llm_settings(fake_llm_server.url), sleep=lambda _s: None) as client:
        intents = make_llm_decomposer(client, _factory(agent_env, question))(agent_env, question)
    offline = decompose(agent_env, question)
    assert nia["entity_id"] in intents.entity_ids and nia["entity_id"] not in offline.entity_ids
    assert {"order", "place"} <= intents.needs and offline.needs <= intents.needs
    assert intents.reader == "llm" and intents.describe()["answer_slot"] == "where the key was kept"
    prompt = fake_llm_server.chat_requests()[0].body["messages"][-1]["content"]
    assert question in prompt


def test_failed_llm_reading_falls_back_to_the_offline_one(agent_env, fake_llm_server):
    fake_llm_server.set_fault_rate(1.0, kinds=("refusal",))
    question = "Why does Tom hide the key?"
    with OpenAICompatibleClient(fast_llm_settings(fake_llm_server.url), sleep=lambda _s: None) as client:
        intents = make_llm_decomposer(client, _factory(agent_env, question))(agent_env, question)
    offline = decompose(agent_env, question)
    assert intents.entity_ids == offline.entity_ids and intents.needs == offline.needs
    assert intents.reader.startswith("offline (LLM reading failed: refused")


def test_llm_reading_keeps_the_question_scope(agent_env, fake_llm_server):
    # Without it a whole-story question read by the model lost its kind: a character question was
    # answered as the plot.
    fake_llm_server.responder = lambda body: json.dumps({"entities": [], "needs": [], "answer_slot": ""})
    with OpenAICompatibleClient(fast_llm_settings(fake_llm_server.url), sleep=lambda _s: None) as client:
        for question, kind in (
            ("What is the plot of the story?", "work"),
            ("Who is Nia, and what does she do in the story?", "character"),
            ("Where was the key kept before she took it?", ""),
        ):
            intents = make_llm_decomposer(client, _factory(agent_env, question))(agent_env, question)
            assert intents.reader == "llm" and intents.scope.kind == kind


def test_a_pair_read_by_the_model_with_one_character_found_plans_without_a_pair_lookup(
    agent_env, fake_llm_server
):
    # The 1.5B model read "pair" into a question naming one character found in the graph: the
    # offline follow-up rules then took a second character that was not there and the run crashed.
    from tasks.query.plan import follow_up_plan
    from tasks.query.tools.registry import TOOLS

    entities = agent_env.store.table("entities")
    nia = entities[entities["name"].str.contains("Nia")].iloc[0]
    fake_llm_server.responder = lambda body: json.dumps(
        {"entities": [nia["name"]], "needs": ["pair", "dialogue"], "answer_slot": ""}
    )
    question = "What does Nia say to the keeper's friend?"
    with OpenAICompatibleClient(fast_llm_settings(fake_llm_server.url), sleep=lambda _s: None) as client:
        intents = make_llm_decomposer(client, _factory(agent_env, question))(agent_env, question)
    assert "pair" in intents.needs
    characters = [
        e for e in intents.entity_ids if agent_env.store.entities_by_id[e]["entity_type"] == "character"
    ]
    assert len(characters) == 1
    plan = follow_up_plan(agent_env, intents, 1, [], set(TOOLS), 5)
    assert plan and not any(args.get("query_name") == "interactions_between" for _, args in plan)
    assert (
        "narrative_sql_search",
        {"query_name": "dialogue_by_speaker", "entity_id": characters[0], "limit": 12},
    ) in plan
