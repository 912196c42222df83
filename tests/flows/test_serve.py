"""`nkw serve`'s HTTP API in-process (FastAPI TestClient): health, documents, answers with the same
JSON as `nkw ask --json`, one shared engine, bounded concurrency and clear 4xx on bad input."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from flows.answer_questions import QueryEngine
from flows.serving.serve import Gate, create_app


@pytest.fixture(scope="module")
def engine(sample_workspace):
    from schemas.config import load_settings

    return QueryEngine(sample_workspace, load_settings(overrides={"embed_texts": {"backend": "hashing"}}))


@pytest.fixture(scope="module")
def client(sample_workspace, engine):
    app = create_app(sample_workspace, engine.settings, engine, concurrency=2, queue=4)
    with TestClient(app) as client:  # the lifespan preloads every document once
        yield client


def test_health_and_documents_after_preload(client):
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["documents"] == 2 and health["offline"] is True
    assert health["loaded"] == ["the_fisherman_and_his_wife", "the_lighthouse_key"]
    documents = client.get("/documents").json()
    assert [d["doc_id"] for d in documents] == ["the_fisherman_and_his_wife", "the_lighthouse_key"]
    assert all(d["loaded"] and d["title"] and d["language"] == "en" for d in documents)


def test_ask_returns_the_ask_json_and_reuses_the_loaded_bundle(client, engine):
    store = engine.store("the_lighthouse_key")
    response = client.post(
        "/ask", json={"doc": "the_lighthouse_key", "question": "Who hides the brass key in the van?"}
    )
    assert response.status_code == 200
    body = response.json()
    assert body["is_offline"] is True and body["mode"].startswith("offline") and body["answer"]
    assert body["citations"] and body["evidence"] and body["answer_kind"]
    assert engine.store("the_lighthouse_key") is store  # nothing was loaded again
    options = ["A golden ring", "A talking flounder", "An old boot", "A silver fish"]
    body = client.post(
        "/ask",
        json={
            "doc": "the_fisherman_and_his_wife",
            "question": "What did the fisherman catch?",
            "options": options,
        },
    ).json()
    assert body["options"] == options and body["answer"] == options[body["chosen_option"]]
    hybrid = client.post(
        "/ask", json={"doc": "the_lighthouse_key", "question": "Where is the key?", "system": "hybrid"}
    )
    assert hybrid.status_code == 200 and hybrid.json()["system"] == "hybrid"


@pytest.mark.parametrize(
    "payload, status, words",
    [
        ({"question": "Who?"}, 400, "several documents"),
        ({"doc": "missing", "question": "Who?"}, 404, "not in this workspace"),
        ({"doc": "the_lighthouse_key"}, 422, "question"),
        ({"doc": "the_lighthouse_key", "question": "   "}, 422, "blank"),
        ({"doc": "the_lighthouse_key", "question": "Who?", "options": ["only one"]}, 422, "two options"),
        ({"doc": "the_lighthouse_key", "question": "Who?", "system": "gpt"}, 422, "system"),
        ({"doc": "the_lighthouse_key", "question": "Who?", "colour": "red"}, 422, "colour"),
        ({"doc": "the_lighthouse_key", "question": "x" * 5000}, 422, "question"),
    ],
)
def test_bad_input_is_a_clear_4xx(client, payload, status, words):
    response = client.post("/ask", json=payload)
    assert response.status_code == status
    detail = response.json()["detail"]
    assert isinstance(detail, str) and words in detail and "Traceback" not in detail


def test_malformed_json_body_is_422(client):
    response = client.post("/ask", content=b"{not json", headers={"content-type": "application/json"})
    assert response.status_code == 422 and isinstance(response.json()["detail"], str)


def test_gate_bounds_waiting_requests():
    gate = Gate(concurrency=1, queue=1)
    assert gate.enter() and gate.enter()
    assert not gate.enter()  # a third would wait beyond the bound: refused (503)
    gate.leave()
    assert gate.enter()


def test_concurrent_questions_share_one_engine(client, engine):
    results: list[int] = []

    def ask() -> None:
        results.append(
            client.post(
                "/ask", json={"doc": "the_lighthouse_key", "question": "Why is the lamp lit?"}
            ).status_code
        )

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [200] * 4 and len(engine._stores) == 2
