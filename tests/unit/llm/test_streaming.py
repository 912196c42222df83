"""Streamed replies: a request is cut when the server is silent, never because it writes slowly;
and the client sends no more requests at once than the server decodes."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from pydantic import Field

from schemas.responses.base import LLMCheckReply, ResponseModel
from tasks.llm.client.http import HTTPCallError
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest
from tasks.llm.client.streaming import reply_from_events
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer

WORDS = " ".join(f"w{k}" for k in range(60))


def _request(item: str = "a") -> LLMRequest:
    messages = ({"role": "user", "content": "Say the words."},)
    return LLMRequest("check", item, "doc", "check/v1", "h", messages, max_tokens=200)


def test_events_spell_the_reply_with_its_usage_and_cache() -> None:
    lines = [
        ": keep-alive",
        "",
        'data: {"choices": [{"index": 0, "delta": {"role": "assistant", "content": "{\\"ok\\": "}}]}',
        'data: {"choices": [{"index": 0, "delta": {"content": "true}"}, "finish_reason": null}]}',
        'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}',
        'data: {"choices": [], "usage": {"prompt_tokens": 40, "completion_tokens": 4}, '
        '"timings": {"cache_n": 32}}',
        "data: [DONE]",
    ]
    reply = reply_from_events(lines)
    assert (reply.content, reply.finish_reason) == ('{"ok": true}', "stop")
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cached_prompt_tokens) == (40, 4, 32)
    with pytest.raises(HTTPCallError, match="in the stream"):
        reply_from_events(['data: {"error": {"message": "out of memory"}}'])
    with pytest.raises(HTTPCallError, match="without a reply"):
        reply_from_events(["data: [DONE]"])


def _slow_server() -> FakeOpenAIServer:
    # 60 words at 0.05 s each: 3 s of writing, never more than 0.05 s of silence
    return FakeOpenAIServer(responder=lambda body: WORDS, decode_s_per_token=0.05, stream_replies=True)


def test_a_slow_writer_is_not_cut_when_streamed() -> None:
    with _slow_server() as server:
        settings = fast_llm_settings(server.url, timeout_s=1.0, deadline_s=20.0, max_retries=0)
        with OpenAICompatibleClient(settings, cache=None) as client:
            result = client.text(_request())
        [sent] = server.chat_requests()
    assert result.ok and result.value.split() == WORDS.split()
    assert sent.body["stream"] is True and sent.body["stream_options"] == {"include_usage": True}
    assert result.calls[0]["completion_tokens"] == 60


def test_the_same_writer_is_cut_at_the_timeout_when_not_streamed() -> None:
    with _slow_server() as server:
        settings = fast_llm_settings(server.url, timeout_s=1.0, deadline_s=20.0, max_retries=0, stream=False)
        with OpenAICompatibleClient(settings, cache=None) as client:
            result = client.text(_request())
    assert not result.ok and result.status == "timeout"


def test_a_silent_server_is_still_cut() -> None:
    with FakeOpenAIServer(faults=["hang"], hang_s=5.0, stream_replies=True) as server:
        settings = fast_llm_settings(server.url, timeout_s=0.5, deadline_s=3.0, max_retries=0)
        with OpenAICompatibleClient(settings, cache=None) as client:
            result = client.structured(_request(), LLMCheckReply)
    assert result.status == "timeout"


def test_requests_in_flight_follow_the_servers_slots() -> None:
    peak, lock, live = [0], threading.Lock(), [0]

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        threading.Event().wait(0.05)
        with lock:
            live[0] -= 1
        return {"ok": True, "echo": "x"}

    with FakeOpenAIServer(responder=responder, slots=1) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url, concurrency=4), cache=None) as client:
            results = client.map_structured([_request(str(k)) for k in range(6)], LLMCheckReply)
            limit = client.pool.limit
    assert all(r.ok for r in results) and limit == 1 and peak[0] == 1


class Names(ResponseModel):
    names: list[str]


class Reason(ResponseModel):
    reason: str = Field(max_length=600)


def test_a_reply_still_being_written_at_the_deadline_keeps_its_complete_items() -> None:
    """A model writing slowly past the call's deadline: what it streamed is kept like a reply cut
    at its limit, its finished items salvaged, instead of losing the whole reply."""
    names = [f"name number {k}" for k in range(40)]  # 120 words at 0.05 s: 6 s of writing

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        return {"names": names}

    with FakeOpenAIServer(responder=responder, decode_s_per_token=0.05, stream_replies=True) as server:
        settings = fast_llm_settings(server.url, timeout_s=1.0, deadline_s=2.0, max_retries=0, max_tokens=400)
        with OpenAICompatibleClient(settings, cache=None) as client:
            result = client.structured(_request(), Names)
    assert result.ok and 0 < len(result.value.names) < len(names)
    assert result.value.names == names[: len(result.value.names)]
    [row] = result.calls
    assert (row["status"], row["finish_reason"]) == ("salvaged", "deadline")


def test_a_slow_server_is_not_asked_for_more_than_it_writes_before_the_deadline() -> None:
    """After 300 tokens measured at about 20 a second, a 5,000-token limit becomes what the server
    writes in the call's 10 s (with slack): about 130, not a reply the deadline would cut."""
    with _slow_server() as server:
        settings = fast_llm_settings(server.url, timeout_s=2.0, deadline_s=10.0, max_retries=0)
        with OpenAICompatibleClient(settings, cache=None) as client:
            for k in range(5):  # 5 x 60 words, each reply measured
                assert client.text(_request(f"warm{k}")).ok
            rate = client.pool.pacing.tokens_per_second()
            big = LLMRequest("check", "big", "doc", "check/v1", "h", _request().messages, max_tokens=5000)
            client.text(big)
        sent = server.chat_requests()[-1].body["max_completion_tokens"]
    assert rate is not None and sent < 5000 and abs(sent - rate * 10 / 1.5) <= rate * 2


def test_a_llama_cpp_server_is_sent_string_lengths_and_vllm_is_not() -> None:
    """llama.cpp's converter takes maxLength (a small model's reason then ends in time); xgrammar
    compiles long ones slowly, so a server without /props gets the portable schema."""
    sent = {}
    for name, slots in (("llama.cpp", 1), ("vllm", None)):
        with FakeOpenAIServer(slots=slots) as server:
            with OpenAICompatibleClient(fast_llm_settings(server.url), cache=None) as client:
                assert client.structured(_request(name), Reason).ok
            [request] = server.chat_requests()
        sent[name] = json.dumps(request.body["response_format"])
    assert '"maxLength"' in sent["llama.cpp"] and '"maxLength"' not in sent["vllm"]
