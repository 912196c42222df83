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
