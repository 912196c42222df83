"""Several servers of one model as one client: each document on one server, a silent server's
requests moved to the next, nothing lost or asked twice."""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pandas as pd

from flows.cli.commands.common import llm_urls
from schemas.config import load_settings
from tasks.llm.client.cache import LLMCache
from tasks.llm.client.factory import build_llm_client
from tasks.llm.client.routing import RoutedClient, rendezvous_order
from tasks.llm.requests.grouped import run_grouped
from tests.fixtures.grouped_requests import merge_shape, render_pairs
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer


def test_a_removed_server_moves_only_its_own_documents() -> None:
    urls = ["http://a/v1", "http://b/v1", "http://c/v1"]
    first = {f"doc{k}": urls[rendezvous_order(f"doc{k}", urls)[0]] for k in range(200)}
    assert set(first.values()) == set(urls)  # every server gets documents
    without_b = [u for u in urls if u != "http://b/v1"]
    moved = {d for d, url in first.items() if url != without_b[rendezvous_order(d, without_b)[0]]}
    assert moved == {d for d, url in first.items() if url == "http://b/v1"}


def test_llm_url_given_twice_configures_two_servers() -> None:
    settings = load_settings(overrides={"llm": {**llm_urls(["http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"])}})
    assert settings.llm.url == "http://127.0.0.1:9/v1" and [e.url for e in settings.llm.endpoints] == [
        "http://127.0.0.1:8/v1"
    ]
    client = build_llm_client(settings.llm, None, None)
    assert isinstance(client, RoutedClient) and len(client.clients) == 2
    client.close()
    assert llm_urls("http://x/v1") == {"url": "http://x/v1"} and llm_urls(None) == {"url": None}


def _ctx(client: Any, doc_id: str) -> Any:
    return SimpleNamespace(
        llm=client, stage="canonicalize_entities", doc_id=doc_id, document=SimpleNamespace(language="en"),
        settings=load_settings(),
    )  # fmt: skip


def _two_servers(tmp_path, a: FakeOpenAIServer, b: FakeOpenAIServer) -> RoutedClient:
    one = fast_llm_settings(a.url, max_retries=1)
    settings = type(one).model_validate({**one.model_dump(), "endpoints": [{"url": b.url}]})
    client = build_llm_client(settings, None, tmp_path / "cache")
    assert isinstance(client, RoutedClient)
    return client


def _ask_documents(client: Any, docs: list[str]) -> dict[str, Any]:
    """Two groups of pairs per document; each document's prompts its own (titled by it)."""
    groups = [["a", "b", "c"], ["d", "e"]]

    def asked(doc: str) -> Any:
        titled = lambda ids: {**render_pairs(ids), "title": doc}  # noqa: E731
        return run_grouped(_ctx(client, doc), merge_shape(), groups, titled)

    return {doc: asked(doc) for doc in docs}


def test_documents_are_spread_over_the_servers_and_each_stays_on_one(tmp_path) -> None:
    # The servers' ports are random, so is which server a document hashes to: with 8 documents all
    # went to one server once in 128 runs; with 24, once in about 8 million.
    docs = [f"doc{k}" for k in range(24)]
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        with _two_servers(tmp_path, a, b) as client:
            batches = _ask_documents(client, docs)
        served = {"a": a.chat_requests(), "b": b.chat_requests()}
    assert all(sorted(batch.values) == ["a", "b", "c", "d", "e"] for batch in batches.values())
    assert served["a"] and served["b"]  # both servers used
    assert len(served["a"]) + len(served["b"]) == 2 * len(docs)  # one request per group, none repeated


def test_a_server_killed_mid_run_loses_nothing_and_repeats_nothing(tmp_path) -> None:
    before, after = [f"doc{k}" for k in range(6)], [f"later{k}" for k in range(16)]
    a, b = FakeOpenAIServer(latency_s=0.02).start(), FakeOpenAIServer(latency_s=0.02).start()
    try:
        with _two_servers(tmp_path, a, b) as client:
            batches = _ask_documents(client, before)
            killer = threading.Timer(0.05, a.stop)  # a goes away while these documents are asked
            killer.start()
            batches |= _ask_documents(client, after)
            killer.join()
            again = _ask_documents(client, before + after)  # every reply is in the shared cache now
    finally:
        a.stop()
        b.stop()
    every = ["a", "b", "c", "d", "e"]
    assert all(sorted(batch.values) == every and not batch.failures for batch in batches.values())
    calls = pd.DataFrame([row for batch in batches.values() for row in batch.calls])
    assert calls["status"].isin(["error", "timeout"]).any()  # a's documents met it gone, and moved
    assert not calls.duplicated(["stage", "item_id", "call_key", "attempt"]).any()
    answered = calls[calls["status"] == "ok"]
    assert len(answered) == 2 * len(batches) and answered["call_key"].is_unique  # each group answered once
    assert all(row["status"] == "cached" for batch in again.values() for row in batch.calls)


def test_a_router_in_front_stays_one_url() -> None:
    settings = load_settings(overrides={"llm": llm_urls(["http://router:4000/v1"])})
    client = build_llm_client(settings.llm, None, None)
    assert not isinstance(client, RoutedClient) and settings.llm.endpoints == []
    client.close()


def test_the_shared_cache_is_one(tmp_path) -> None:
    settings = load_settings(overrides={"llm": llm_urls(["http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1"])})
    client = build_llm_client(settings.llm, None, tmp_path)
    assert isinstance(client, RoutedClient)
    caches = {id(c.cache) for c in client.clients}
    assert len(caches) == 1 and isinstance(client.clients[0].cache, LLMCache)
    client.close()
