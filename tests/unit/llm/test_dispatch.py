"""Requests of worker processes go through the build's process: one bound, the same replies and
the same errors as a request sent directly."""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tasks.llm.client.dispatch import DispatchClient
from tasks.llm.client.http import HTTPCallError, api_base, post_chat
from tasks.llm.client.pool import adopt_pools, server_pool, sharing
from tests.fixtures.openai_server import FakeOpenAIServer

HEADERS = {"Authorization": "Bearer test"}


def _payload(text: str) -> dict:
    return {"model": "test-model", "messages": [{"role": "user", "content": text}], "max_tokens": 16}


def _ask_from_a_worker(shared, base: str, limit: int, texts: list[str], answers) -> None:
    adopt_pools(shared)
    pool = server_pool(base, limit)
    with ThreadPoolExecutor(len(texts)) as threads:
        replies = list(threads.map(lambda t: pool.post_chat(None, base, HEADERS, _payload(t), 10.0), texts))
    answers.put([(text, reply.content) for text, reply in zip(texts, replies)])


def test_spawned_workers_share_one_bound_and_get_their_own_replies():
    with FakeOpenAIServer(
        responder=lambda body: body["messages"][-1]["content"].upper(), latency_s=0.15
    ) as server:
        base = api_base(server.url)
        pool = server_pool(base, 2)
        context = multiprocessing.get_context("spawn")
        answers = context.Queue()
        with sharing(pool) as shared:
            workers = [
                context.Process(
                    target=_ask_from_a_worker,
                    args=(shared, base, 2, [f"worker {w} item {i}" for i in range(4)], answers),
                )
                for w in range(2)
            ]
            for worker in workers:
                worker.start()
            got = [answers.get(timeout=60) for _ in workers]
            for worker in workers:
                worker.join(30)
        assert [worker.exitcode for worker in workers] == [0, 0]
        assert sorted(pair for batch in got for pair in batch) == sorted(
            (f"worker {w} item {i}", f"WORKER {w} ITEM {i}") for w in range(2) for i in range(4)
        )
        assert server.counts["chat"] == 8
        assert server.max_in_flight == 2  # eight requests at once from two processes, two at the server
        assert pool.busy_slot_seconds >= 8 * 0.15  # the build's process measured every request


@pytest.mark.parametrize(
    "fault, kind, status, retry_after",
    [("http_429", "http", 429, 2.0), ("http_400", "http", 400, None), ("malformed_json", None, None, None)],
)
def test_a_request_sent_for_a_worker_answers_as_a_direct_one(fault, kind, status, retry_after):
    with FakeOpenAIServer(retry_after="2") as server:
        base = api_base(server.url)
        pool = server_pool(base, 3)

        def outcome(send):
            server.queue_faults(fault)
            try:
                return ("reply", send().content)
            except HTTPCallError as exc:
                return ("error", exc.kind, exc.http_status, exc.retry_after, str(exc))

        with httpx.Client() as http:
            direct = outcome(lambda: post_chat(http, base, HEADERS, _payload("x"), 10.0))
        with sharing(pool) as shared:
            client = DispatchClient(shared[0][1])
            dispatched = outcome(lambda: client.post_chat(base, HEADERS, _payload("x"), 10.0))
    assert dispatched == direct
    if kind is not None:
        assert direct[1:4] == (kind, status, retry_after)


def test_a_request_times_out_at_its_own_timeout():
    with FakeOpenAIServer(faults=["hang"], hang_s=3.0) as server:
        base = api_base(server.url)
        with sharing(server_pool(base, 1)) as shared:
            started = time.monotonic()
            with pytest.raises(HTTPCallError) as failed:
                DispatchClient(shared[0][1]).post_chat(base, HEADERS, _payload("x"), 0.5)
    assert failed.value.kind == "timeout" and failed.value.retryable
    assert time.monotonic() - started < 2.5


def test_requests_waiting_when_the_build_ends_fail_as_retryable_connection_errors():
    with FakeOpenAIServer(latency_s=1.0) as server:
        base = api_base(server.url)
        errors: list[HTTPCallError] = []
        with sharing(server_pool(base, 1)) as shared:
            client = DispatchClient(shared[0][1])

            def ask() -> None:
                try:
                    client.post_chat(base, HEADERS, _payload("x"), 10.0)
                except HTTPCallError as exc:
                    errors.append(exc)

            waiting = [threading.Thread(target=ask) for _ in range(3)]
            for thread in waiting:
                thread.start()
            time.sleep(0.3)  # one request at the server, two queued behind it
        for thread in waiting:
            thread.join(10)
        with pytest.raises(HTTPCallError) as after:
            client.post_chat(base, HEADERS, _payload("x"), 10.0)
    assert len(errors) >= 2 and all(e.kind == "connect" and e.retryable for e in errors)
    assert after.value.kind == "connect"


def test_a_caller_without_the_key_is_refused_and_the_queue_keeps_serving():
    from dataclasses import replace

    with FakeOpenAIServer(responder=lambda body: "fine") as server:
        base = api_base(server.url)
        with sharing(server_pool(base, 1)) as shared:
            address = shared[0][1]
            with pytest.raises(HTTPCallError) as refused:
                DispatchClient(replace(address, authkey=b"wrong")).post_chat(
                    base, HEADERS, _payload("x"), 5.0
                )
            assert refused.value.kind == "connect"
            assert DispatchClient(address).post_chat(base, HEADERS, _payload("x"), 5.0).content == "fine"
