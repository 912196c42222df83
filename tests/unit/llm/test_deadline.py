"""A reply that trickles in a byte at a time ends at the request's timeout and the call's deadline,
not when the server stops sending (issue: slow replies kept builds and `ask` running)."""

from __future__ import annotations

import time

import pytest

from schemas.responses.base import LLMCheckReply
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer


def _request() -> LLMRequest:
    return LLMRequest(
        stage="extract_graph",
        item_id="c-1",
        doc_id="d-1",
        prompt_id="extract_graph/v1",
        prompt_hash="h",
        messages=({"role": "user", "content": "hello"},),
    )


@pytest.mark.parametrize("fault", ["trickle", "trickle_headers"])
def test_a_trickling_reply_is_cut_at_the_request_timeout(fault: str) -> None:
    # A byte every 0.2 s resets httpx's per-read timeout forever; the total deadline cuts it.
    with FakeOpenAIServer(trickle_s=0.2) as server:
        server.queue_faults(fault)
        settings = fast_llm_settings(server.url, timeout_s=1.0, deadline_s=30.0, max_retries=1)
        with OpenAICompatibleClient(settings) as client:
            started = time.monotonic()
            result = client.structured(_request(), LLMCheckReply)
            elapsed = time.monotonic() - started
    # The first attempt is cut at 1 s; the retry (no fault queued) answers.
    assert [row["status"] for row in result.calls] == ["timeout", "ok"]
    assert "no answer within 1s" in result.calls[0]["error"]
    assert elapsed < 3.0


def test_the_call_deadline_holds_during_a_request() -> None:
    # Every attempt trickles: the call ends at its 1.5 s deadline, not after the 8 s timeouts.
    with FakeOpenAIServer(trickle_s=0.2) as server:
        server.set_fault_rate(1.0, kinds=("trickle",))
        settings = fast_llm_settings(server.url, timeout_s=8.0, deadline_s=1.5, max_retries=4)
        with OpenAICompatibleClient(settings) as client:
            started = time.monotonic()
            result = client.structured(_request(), LLMCheckReply)
            elapsed = time.monotonic() - started
    assert result.value is None and result.status == "timeout"
    assert elapsed < 2.5
