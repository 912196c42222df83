"""A client that fits the server it talks to, against the test server: the context length read from
/v1/models bounds every request, a cut reply gets a really larger limit or its group is split,
reply limits follow the input, and timeouts follow the server's measured speed."""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from schemas.responses.base import LLMCheckReply
from tasks.llm.client.http import context_length
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.pacing import Pacing
from tasks.llm.client.protocol import LLMRequest
from tasks.llm.requests.grouped import reply_limit, run_grouped
from tests.fixtures.grouped_requests import grouped_ctx, merge_shape, render_pairs
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer

PROMPT = "canonicalize_entities/v2"
SHAPE = merge_shape(80)


def _request(text: str = "hello", max_tokens: int | None = None) -> LLMRequest:
    return LLMRequest(
        stage="extract_graph",
        item_id="c-1",
        doc_id="d-1",
        prompt_id="extract_graph/v1",
        prompt_hash="h",
        messages=({"role": "user", "content": text},),
        max_tokens=max_tokens,
    )


def _limits(server: FakeOpenAIServer) -> list[int]:
    return [r.body["max_completion_tokens"] for r in server.chat_requests()]


@pytest.mark.parametrize("style", ["vllm", "llamacpp"])
def test_the_reply_limit_is_cut_to_what_the_context_leaves(style: str) -> None:
    with FakeOpenAIServer(context_tokens=300, context_style=style, enforce_limits=True) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url, max_tokens=5000)) as client:
            result = client.structured(_request("a short prompt"), LLMCheckReply)
        [sent] = server.chat_requests()
    assert result.status == "ok"
    [limit] = _limits(server)
    # The prompt estimate errs high, so prompt + limit stays inside the 300-token context.
    assert limit < 300 and result.calls[0]["prompt_tokens"] + limit <= 300
    assert sent.body["max_completion_tokens"] == limit and "max_tokens" not in sent.body


def test_context_length_as_vllm_and_llama_cpp_report_it() -> None:
    assert context_length({"id": "m", "max_model_len": 32768}) == 32768
    # llama.cpp (xllamacpp) reports the per-slot context in meta.n_ctx beside the trained one.
    assert context_length({"id": "m", "meta": {"n_ctx": 4096, "n_ctx_train": 32768}}) == 4096
    assert context_length({"id": "m", "meta": {"n_ctx_train": 32768}}) == 32768
    assert context_length({"id": "m"}) is None and context_length({"max_model_len": "big"}) is None


def test_the_setting_overrides_the_server_and_a_prompt_too_long_is_not_sent() -> None:
    with FakeOpenAIServer(context_tokens=100_000) as server:
        settings = fast_llm_settings(server.url, context_tokens=120)
        with OpenAICompatibleClient(settings) as client:
            result = client.structured(_request("word " * 400), LLMCheckReply)
        assert server.chat_requests() == []
    assert result.value is None and result.status == "truncated"
    assert re.search(r"leaves 0 tokens for a reply in the server's context of 120 tokens", result.error)


def test_a_length_retry_is_larger_but_bounded_by_the_context() -> None:
    with FakeOpenAIServer(context_tokens=400) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url, max_tokens=64)) as client:
            server.queue_faults("length")
            grown = client.structured(_request("one"), LLMCheckReply)
            first = _limits(server)
            server.reset()
            server.queue_faults("length")
            capped = client.structured(_request("two", max_tokens=5000), LLMCheckReply)
    assert [r["status"] for r in grown.calls] == ["truncated", "ok"]
    assert first[1] > first[0] and first == [64, 128]  # 2 x 64, within max_tokens_retry=128
    # Already at the most the context allows: not the same request again, a truncated failure.
    assert capped.status == "truncated" and len(server.chat_requests()) == 1
    assert "no larger limit fits (context 400)" in capped.error


_ctx, _render = grouped_ctx, render_pairs


def _answer_all(body: dict[str, Any]) -> dict[str, Any]:
    first = next(m["content"] for m in body["messages"] if m["role"] == "user")
    ids = re.findall(r"^\d+\. Record A: (\S+) /", first, re.MULTILINE)
    return {"items": [{"number": n, "decision": "separate", "reason": "ok"} for n in range(1, len(ids) + 1)]}


def test_a_looping_reply_gets_twice_its_limit_not_thousands() -> None:
    with FakeOpenAIServer() as server:
        settings = fast_llm_settings(server.url, max_tokens_retry=4096)
        with OpenAICompatibleClient(settings) as client:
            server.queue_faults("length", "length")
            result = client.structured(_request("loop", max_tokens=200), LLMCheckReply)
            server.queue_faults("length")
            client.structured(_request("big", max_tokens=5000), LLMCheckReply)
    assert result.status == "truncated" and _limits(server) == [200, 400, 5000]  # 5000: no retry


def _answer_all_long_first(body: dict[str, Any]) -> dict[str, Any]:
    """As `_answer_all`, with a first item so long that half the reply holds no whole item."""
    reply = _answer_all(body)
    reply["items"][0]["reason"] = "the two records differ in name, place and time " * 8
    return reply


def test_a_cut_group_keeps_its_complete_items_and_asks_again_for_the_rest() -> None:
    with FakeOpenAIServer(responder=_answer_all) as server:
        server.queue_faults("length")  # the fake cuts the reply in half: the first items are whole
        settings = fast_llm_settings(server.url, concurrency=1, max_tokens_retry=128)
        with OpenAICompatibleClient(settings) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a", "b", "c", "d"]], _render)
    assert sorted(batch.values) == ["a", "b", "c", "d"] and batch.failures == []
    first, *rest = batch.calls
    assert (first["item_id"], first["status"]) == ("a+3", "salvaged") and "kept 1 complete" in first["error"]
    # most of the group was left out: halves, asked at once
    assert sorted((row["item_id"], row["status"]) for row in rest) == [("b#again+1", "ok"), ("d#again", "ok")]


def test_a_group_whose_reply_is_cut_is_split_not_lost() -> None:
    with FakeOpenAIServer(responder=_answer_all_long_first) as server:
        server.queue_faults("length")  # the four-item request; its limit is above max_tokens_retry
        settings = fast_llm_settings(server.url, concurrency=1, max_tokens_retry=128)
        with OpenAICompatibleClient(settings) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a", "b", "c", "d"]], _render)
    assert sorted(batch.values) == ["a", "b", "c", "d"] and batch.failures == []
    assert [row["item_id"] for row in batch.calls] == ["a+3", "a#split+1", "c#split+1"]
    assert _limits(server) == [reply_limit(80, 4), reply_limit(80, 2), reply_limit(80, 2)]


def test_a_group_cut_again_after_a_larger_retry_is_split() -> None:
    with FakeOpenAIServer(responder=_answer_all_long_first) as server:
        server.queue_faults("length", "length")
        settings = fast_llm_settings(server.url, concurrency=1, max_tokens_retry=4096)
        with OpenAICompatibleClient(settings) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a", "b"]], _render)
    assert sorted(batch.values) == ["a", "b"] and batch.failures == []
    assert [row["item_id"] for row in batch.calls] == ["a+1", "a+1", "a#split", "b#split"]
    pair, one = reply_limit(80, 2), reply_limit(80, 1)
    assert _limits(server) == [pair, 2 * pair, one, one]


def test_reply_limits_follow_the_items_asked_not_the_global_limit() -> None:
    with FakeOpenAIServer(responder=_answer_all) as server:
        settings = fast_llm_settings(server.url, max_tokens=4096, concurrency=1)
        with OpenAICompatibleClient(settings) as client:
            run_grouped(_ctx(client), SHAPE, [["a"], ["b", "c", "d"]], _render)
    assert _limits(server) == [reply_limit(80, 1), reply_limit(80, 3)] == [208, 368]


def test_pacing_sizes_the_timeout_by_the_measured_speed() -> None:
    pacing = Pacing()
    assert pacing.timeout_for(2048, 120.0) == 120.0  # nothing measured: the floor
    pacing.observe(completion_tokens=100, seconds=10.0, prompt_chars=4000, prompt_tokens=1000)
    assert pacing.tokens_per_second() == 10.0
    assert pacing.timeout_for(2048, 120.0) == pytest.approx(1.5 * 2048 / 10)  # not cut at 120 s
    assert pacing.timeout_for(64, 120.0) == 120.0
    assert pacing.chars_per_token() == 4.0 and pacing.prompt_tokens(400) == 100


def test_a_slow_server_is_not_cancelled_again_once_its_speed_is_known() -> None:
    # About 0.8 s per reply, against a 0.5 s timeout floor.
    reply = {"ok": True, "echo": " ".join(["word"] * 40)}
    with FakeOpenAIServer(responder=lambda body: reply, decode_s_per_token=0.02) as server:
        settings = fast_llm_settings(server.url, timeout_s=0.5, deadline_s=20.0, max_tokens=64)
        with OpenAICompatibleClient(settings) as client:
            started = time.monotonic()
            first = client.structured(_request("one"), LLMCheckReply)
            second = client.structured(_request("two"), LLMCheckReply)
            elapsed = time.monotonic() - started
    # The first attempt is cut at the floor; its retry gets twice the time; then the speed is known.
    assert [r["status"] for r in first.calls] == ["timeout", "ok"]
    assert [r["status"] for r in second.calls] == ["ok"]
    assert elapsed < 10.0


def test_a_looping_reply_is_kept_once_without_asking_for_more_tokens() -> None:
    item = {"number": 1, "decision": "separate", "reason": "ok"}

    def looping(body: dict[str, Any]) -> str:  # the same item over and over, cut mid-item
        return json.dumps({"items": [item] * 30})[:-40]

    with FakeOpenAIServer(responder=looping) as server:
        server.queue_faults("length")
        settings = fast_llm_settings(server.url, concurrency=1, max_tokens_retry=4096)
        with OpenAICompatibleClient(settings) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a"]], _render)
    assert sorted(batch.values) == ["a"] and batch.failures == []
    [row] = batch.calls  # no second request: a larger limit would buy more repeats
    assert row["status"] == "salvaged"
    assert re.search(r"kept 1 complete item\(s\), dropped [1-9]\d* repeat", row["error"]), row["error"]
