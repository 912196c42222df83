"""A session keeps only the documents asked last: an evaluation over a corpus reads every document
once, and a session that kept them all grew with the corpus (past 10 GB over 131 screenplays)."""

from __future__ import annotations

from flows.answer_questions import QueryEngine
from tasks.query.store import reader as store_reader

SCREENPLAY = "the_lighthouse_key"
STORY = "the_fisherman_and_his_wife"
QUESTION = "Why is the lamp lit?"


def test_a_session_forgets_the_document_asked_longest_ago_and_answers_it_the_same(
    sample_workspace, hashing_settings
):
    engine = QueryEngine(sample_workspace, hashing_settings)
    engine.max_open_documents = 1
    first = engine.ask(SCREENPLAY, QUESTION)
    store = engine.store(SCREENPLAY)
    engine.store(SCREENPLAY).sql("SELECT count(*) FROM entities", {})  # opens its SQL connection
    assert "_sql" in store.__dict__

    engine.ask(STORY, "What does the fisherman catch?")
    assert set(engine._stores) == {STORY} and set(engine._indexes) == {STORY}
    assert SCREENPLAY not in engine._windows and SCREENPLAY not in engine._envs
    assert "_sql" not in store.__dict__  # the forgotten store's connection is closed

    again = engine.ask(SCREENPLAY, QUESTION)
    assert engine.store(SCREENPLAY) is not store  # loaded again
    assert again.answer == first.answer
    assert [(e.chunk_id, e.text) for e in again.evidence] == [(e.chunk_id, e.text) for e in first.evidence]


def test_a_forgotten_store_still_answers_a_thread_that_holds_it(sample_workspace, hashing_settings):
    engine = QueryEngine(sample_workspace, hashing_settings)
    engine.max_open_documents = 1
    store = engine.store(SCREENPLAY)
    before = store.sql("SELECT count(*) FROM entities", {})
    engine.ask(STORY, "What does the fisherman catch?")
    assert store.sql("SELECT count(*) FROM entities", {}) == before  # reopened on its next query
    store.close()


def test_the_reader_cache_keeps_the_documents_read_last(sample_workspace, monkeypatch):
    monkeypatch.setattr(store_reader, "MAX_READERS", 1)
    monkeypatch.setattr(store_reader, "_READERS", type(store_reader._READERS)())
    first = store_reader.document_reader(sample_workspace, SCREENPLAY)
    rows = first.frame("sections")
    store_reader.document_reader(sample_workspace, STORY)
    assert [key[1] for key in store_reader._READERS] == [STORY]
    again = store_reader.document_reader(sample_workspace, SCREENPLAY)
    assert again is not first
    assert again.frame("sections").equals(rows)
    first.close()
    store_reader.close_readers()


def test_a_session_keeps_at_least_the_documents_an_evaluation_answers_at_once(sample_workspace):
    from schemas.config import load_settings

    settings = load_settings(
        overrides={"embed_texts": {"backend": "hashing"}, "evaluate": {"document_concurrency": 12}}
    )
    assert QueryEngine(sample_workspace, settings).max_open_documents == 24


def test_a_lazy_server_keeps_only_the_documents_asked_last(sample_workspace, hashing_settings):
    from fastapi.testclient import TestClient

    from flows.serving.serve import create_app

    engine = QueryEngine(sample_workspace, hashing_settings)
    engine.max_open_documents = 1
    app = create_app(sample_workspace, hashing_settings, engine, preload=False)
    with TestClient(app) as client:
        assert not engine._stores  # nothing loaded at startup
        for doc, question in ((SCREENPLAY, QUESTION), (STORY, "What does the fisherman catch?")):
            assert client.post("/ask", json={"doc": doc, "question": question}).status_code == 200
        assert set(engine._stores) == {STORY}
        assert client.post("/ask", json={"doc": SCREENPLAY, "question": QUESTION}).status_code == 200
        assert set(engine._stores) == {SCREENPLAY}
