"""The OpenAI-compatible LLM client against the fake server: validation, re-asks, truncation,
retries, refusals, reasoning stripping, cache, secrecy of the key, concurrency and `check_server`."""

from __future__ import annotations

import json
import logging
import random
import socket
import threading
import time
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
from pydantic import BaseModel, Field

from schemas.config import LLMSettings
from schemas.responses.base import LLMCheckReply, ResponseModel
from schemas.responses.batched import batch_model
from schemas.responses.hierarchy import StorylineDescription
from schemas.tables import spec
from tasks.llm.client.cache import LLMCache
from tasks.llm.client.factory import build_llm_client
from tasks.llm.client.fields import describe_fields
from tasks.llm.client.openai_client import (
    OpenAICompatibleClient,
    strip_fences,
    strip_thinking,
)
from tasks.llm.client.portable import portable_schema
from tasks.llm.client.replies import ANSWER_GAP, REPLY_CLOSE, REPLY_OPEN, llguidance_grammar
from tasks.llm.client.protocol import LLMRequest, LLMResult
from tasks.llm.client.server_check import check_server
from tasks.tables.contracts import check_contracts
from tasks.tables.io import to_arrow
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer, schema_instance

SECRET = "sk-test-secret-0123456789abcdef"


class Mention(ResponseModel):
    name: str
    kind: Literal["person", "place"]
    salience: float = Field(ge=0, le=1)


class Extraction(ResponseModel):
    mentions: list[Mention]
    count: int = Field(ge=1)
    note: str | None = None
    is_complete: bool


class Recorder:
    """A no-op `sleep` that remembers what it was asked to wait."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


def make_request(item_id: str = "chunk-1", text: str = "Who is in the kitchen?", **kw: Any) -> LLMRequest:
    return LLMRequest(
        stage="extract_graph",
        item_id=item_id,
        doc_id="doc-1",
        prompt_id="extract_graph/v1",
        prompt_hash="abc123",
        messages=({"role": "system", "content": "Extract mentions."}, {"role": "user", "content": text}),
        **kw,
    )


def make_client(
    server: FakeOpenAIServer,
    sleep: Recorder | None = None,
    api_key: str | None = None,
    cache: LLMCache | None = None,
    **overrides: Any,
) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(
        fast_llm_settings(server.url, **overrides),
        api_key=api_key,
        cache=cache,
        sleep=sleep or Recorder(),
        rng=random.Random(7),
    )


def statuses(result: LLMResult) -> list[str]:
    return [row["status"] for row in result.calls]


def assert_llm_calls_conform(rows: list[dict[str, Any]]) -> None:
    """The rows cast to the declared llm_calls schema and pass its contracts."""
    assert check_contracts("llm_calls", to_arrow("llm_calls", rows), lambda _table: None) == []


# -- structured output -----------------------------------------------------------------


def test_structured_reply_is_validated_and_recorded(fake_llm_server: FakeOpenAIServer) -> None:
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), Extraction)
    assert result.status == "ok" and result.error is None and result.failure_row() is None
    assert isinstance(result.value, Extraction) and result.value.mentions[0].kind == "person"
    [row] = result.calls
    assert row["attempt"] == 0 and row["status"] == "ok" and row["finish_reason"] == "stop"
    assert (row["doc_id"], row["stage"], row["item_id"]) == ("doc-1", "extract_graph", "chunk-1")
    assert (row["prompt_id"], row["prompt_version"], row["prompt_hash"]) == (
        "extract_graph/v1",
        "v1",
        "abc123",
    )
    # The fake server counts words: 7 in the request's messages, plus the field list the client adds.
    fields = describe_fields(Extraction.model_json_schema())
    assert row["model"] == TEST_MODEL and row["prompt_tokens"] == 7 + len(fields.split())
    assert row["completion_tokens"] > 0
    assert len(row["call_key"]) == 64 and row["latency_ms"] > 0
    assert_llm_calls_conform(result.calls)

    [sent] = fake_llm_server.chat_requests()
    fmt = sent.body["response_format"]
    # No `strict` (vLLM ignores it) and no `guided_json` (ignored since vLLM 0.12).
    assert fmt["type"] == "json_schema" and "strict" not in fmt["json_schema"]
    assert fmt["json_schema"]["name"] == "Extraction"
    assert fmt["json_schema"]["schema"] == portable_schema(Extraction.model_json_schema())
    assert "grammar" not in sent.body
    assert sent.body["chat_template_kwargs"] == {"enable_thinking": False}
    # max_completion_tokens, not the deprecated max_tokens.
    assert "guided_json" not in sent.body and "max_tokens" not in sent.body
    assert sent.body["max_completion_tokens"] == 64 and sent.body["temperature"] == 0.0
    assert sent.body["messages"][0]["content"].endswith(fields)
    assert sent.headers["Authorization"] == "Bearer EMPTY"  # vLLM's dummy key when none is configured


def test_request_overrides_are_sent(fake_llm_server: FakeOpenAIServer) -> None:
    with make_client(fake_llm_server, enable_thinking=True) as client:
        result = client.structured(make_request(max_tokens=33, temperature=0.7), Extraction)
    assert result.status == "ok"
    [sent] = fake_llm_server.chat_requests()
    assert sent.body["chat_template_kwargs"] == {"enable_thinking": True}
    assert (sent.body["max_completion_tokens"], sent.body["temperature"]) == (33, 0.7)


def test_a_llguidance_server_gets_the_whole_schema_as_its_grammar(fake_llm_server: FakeOpenAIServer) -> None:
    with make_client(fake_llm_server, grammar="llguidance") as client:
        client.structured(make_request(), Extraction)  # the test server shapes replies by response_format
    sent = fake_llm_server.chat_requests()[0]
    assert "response_format" not in sent.body
    head, _, schema_json = sent.body["grammar"].partition("%json ")
    assert head == "%llguidance {}\nstart: "
    schema = json.loads(schema_json)
    assert schema == Extraction.model_json_schema()  # string limits kept: llguidance compiles them
    assert list(schema["properties"]) == list(Extraction.model_fields)  # written in the model's order


def test_a_grouped_reply_is_framed_so_only_its_answers_are_free() -> None:
    """Between answers the frame is literal: a model that wants to stop after its first answer cannot
    write whitespace there until its limit (the 0.5B continuity judge did, in a free frame)."""
    grammar = llguidance_grammar(batch_model(StorylineDescription), 3)
    head, start, *rules = grammar.split("\n")
    assert head == "%llguidance {}"
    opening, gap, closing = (json.dumps(literal) for literal in (REPLY_OPEN, ANSWER_GAP, REPLY_CLOSE))
    assert start == f"start: {opening} answer1 {gap} answer2 {gap} answer3 {closing}"
    answers = []
    for k, rule in enumerate(rules, start=1):
        name, _, schema_json = rule.partition(": %json ")
        schema = json.loads(schema_json)
        assert name == f"answer{k}" and schema["properties"]["number"] == {"type": "integer", "const": k}
        assert "$defs" in schema  # each answer's schema stands alone (its relations' model)
        answers.append(json.dumps({"number": k, "name": f"S{k}", "description": "It goes on."}, indent=2))
    # What the frame lets a model write is a reply of the grouped model.
    reply = REPLY_OPEN + ANSWER_GAP.join(answers) + REPLY_CLOSE
    parsed = batch_model(StorylineDescription).model_validate_json(reply)
    assert [item.number for item in parsed.items] == [1, 2, 3]


def test_an_old_config_naming_guided_json_extra_gets_one_clear_line() -> None:
    with pytest.raises(ValueError, match=r"\[llm\] guided_json_extra was removed .*delete it"):
        LLMSettings(guided_json_extra=True)


def test_injected_http_client_is_used_and_left_open(fake_llm_server: FakeOpenAIServer) -> None:
    seen: list[str] = []
    http = httpx.Client(event_hooks={"request": [lambda request: seen.append(request.url.path)]})
    client = OpenAICompatibleClient(fast_llm_settings(fake_llm_server.url), http_client=http)
    assert client.structured(make_request(), LLMCheckReply).status == "ok"
    client.close()
    assert seen == ["/props", "/v1/models", "/v1/chat/completions"] and not http.is_closed
    http.close()


@pytest.mark.parametrize("suffix", ["", "/", "/v1", "/v1/"])
def test_base_url_with_or_without_v1(fake_llm_server: FakeOpenAIServer, suffix: str) -> None:
    settings = fast_llm_settings(fake_llm_server.root_url + suffix)
    with OpenAICompatibleClient(settings, sleep=Recorder()) as client:
        assert client.list_models() == [TEST_MODEL]
        assert client.structured(make_request(), LLMCheckReply).status == "ok"


@pytest.mark.parametrize("fault", ["malformed_json", "schema_invalid"])
def test_invalid_reply_is_reasked_once_with_the_error(fake_llm_server: FakeOpenAIServer, fault: str) -> None:
    fake_llm_server.queue_faults(fault)
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), Extraction)
    assert statuses(result) == ["invalid", "ok"] and result.status == "ok"
    assert [row["attempt"] for row in result.calls] == [0, 1]
    assert "validation error" in result.calls[0]["error"]
    first, second = fake_llm_server.chat_requests()
    assert len(second.body["messages"]) == len(first.body["messages"]) + 2
    bad_reply, correction = second.body["messages"][-2:]
    assert bad_reply["role"] == "assistant" and correction["role"] == "user"
    assert result.calls[0]["error"][:40] in correction["content"]
    assert_llm_calls_conform(result.calls)


def test_reask_failing_too_is_an_invalid_failure(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults("malformed_json", "schema_invalid")
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), Extraction)
    assert result.value is None and result.status == "invalid" and statuses(result) == ["invalid", "invalid"]
    failure = result.failure_row()
    assert failure is not None and set(failure) == set(spec("failures").columns)
    assert (failure["doc_id"], failure["stage"], failure["item_id"]) == ("doc-1", "extract_graph", "chunk-1")
    assert failure["error"].startswith("llm invalid:") and "mentions" in failure["error"]
    assert json.loads(failure["payload"])["attempts"] == 2
    assert check_contracts("failures", to_arrow("failures", [failure]), lambda _table: None) == []
    assert len(fake_llm_server.chat_requests()) == 2


def test_length_is_retried_with_max_tokens_retry(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults("length")
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), Extraction)
    assert statuses(result) == ["truncated", "ok"] and isinstance(result.value, Extraction)
    assert result.calls[0]["finish_reason"] == "length"
    assert [r.body["max_completion_tokens"] for r in fake_llm_server.chat_requests()] == [64, 128]


def test_length_twice_is_a_truncated_failure(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults("length", "length")
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), Extraction)
    assert (
        result.value is None
        and result.status == "truncated"
        and statuses(result) == ["truncated", "truncated"]
    )
    assert result.failure_row()["error"].startswith("llm truncated:")
    assert len(fake_llm_server.chat_requests()) == 2


def test_429_is_retried_after_backoff(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults("http_429")
    sleep = Recorder()
    with make_client(fake_llm_server, sleep=sleep, backoff_s=0.01) as client:
        result = client.structured(make_request(), Extraction)
    assert statuses(result) == ["error", "ok"] and result.status == "ok"
    assert "HTTP 429" in result.calls[0]["error"]
    [delay] = sleep.delays
    assert (
        0.005 <= delay <= 0.015
    )  # backoff_s * 2**0 * jitter in [0.5, 1.5]; Retry-After: 0 does not shorten it


def test_retry_after_header_is_respected_and_capped(fake_llm_server: FakeOpenAIServer) -> None:
    sleep = Recorder()
    with make_client(fake_llm_server, sleep=sleep, backoff_s=0.01, deadline_s=500) as client:
        fake_llm_server.retry_after = "7"
        fake_llm_server.queue_faults("http_429")
        assert client.structured(make_request("a"), Extraction).status == "ok"
        fake_llm_server.retry_after = "3600"
        fake_llm_server.queue_faults("http_429")
        assert client.structured(make_request("b"), Extraction).status == "ok"
    assert sleep.delays == [7.0, 60.0]


def test_500_past_max_retries_is_an_error_with_exponential_backoff(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults("http_500", "http_500", "http_500", "http_500")
    sleep = Recorder()
    with make_client(fake_llm_server, sleep=sleep, max_retries=2, backoff_s=1.0) as client:
        result = client.structured(make_request(), Extraction)
    assert result.value is None and result.status == "error" and statuses(result) == ["error"] * 3
    assert "HTTP 500" in result.error and result.failure_row()["error"].startswith("llm error:")
    # backoff_s * 2**n * jitter, the jitter drawn from the injected rng in [0.5, 1.5]
    twin = random.Random(7)
    assert sleep.delays == pytest.approx([1.0 * 2**n * twin.uniform(0.5, 1.5) for n in range(2)])
    assert 0.5 <= sleep.delays[0] <= 1.5 and 1.0 <= sleep.delays[1] <= 3.0 and sleep.delays[0] != 1.0
    assert len(fake_llm_server.chat_requests()) == 3


@pytest.mark.parametrize(
    "case, expected", [("http_400", "HTTP 400"), ("unknown_model", "HTTP 404"), ("wrong_key", "HTTP 401")]
)
def test_client_errors_are_not_retried(fake_llm_server: FakeOpenAIServer, case: str, expected: str) -> None:
    sleep = Recorder()
    with make_client(fake_llm_server, sleep=sleep, api_key="wrong") as client:
        if case == "http_400":
            fake_llm_server.queue_faults(case)
        elif case == "unknown_model":
            client.model = "missing-model"  # 404 like vLLM
        else:
            fake_llm_server.api_key = "right"
        result = client.structured(make_request(), Extraction)
    assert result.status == "error" and statuses(result) == ["error"] and sleep.delays == []
    assert expected in result.error and len(fake_llm_server.chat_requests()) == 1


def test_hang_is_a_timeout(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults("hang", "hang")
    started = time.perf_counter()
    with make_client(fake_llm_server, timeout_s=0.2, max_retries=1) as client:
        result = client.structured(make_request(), Extraction)
    assert result.value is None and result.status == "timeout" and statuses(result) == ["timeout", "timeout"]
    assert all(row["latency_ms"] >= 190 for row in result.calls)
    assert time.perf_counter() - started < 2.0


def test_deadline_bounds_all_attempts(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.queue_faults(*["hang"] * 10)
    started = time.perf_counter()
    with make_client(fake_llm_server, timeout_s=0.6, deadline_s=0.9, max_retries=10) as client:
        result = client.structured(make_request(), Extraction)
    elapsed = time.perf_counter() - started
    assert result.status == "timeout" and "deadline" in result.error
    assert statuses(result) == ["timeout", "timeout"]
    # The second attempt only gets the 0.3 s left of the deadline, not a full 0.6 s timeout (margins
    # wide enough for a loaded host).
    assert result.calls[1]["latency_ms"] < 500 and elapsed < 1.5


@pytest.mark.parametrize("fault", ["refusal", "content_filter"])
def test_refusal_is_not_retried(fake_llm_server: FakeOpenAIServer, fault: str) -> None:
    fake_llm_server.queue_faults(fault)
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), Extraction)
    assert result.value is None and result.status == "refused" and statuses(result) == ["refused"]
    assert result.failure_row()["error"].startswith("llm refused:")
    assert len(fake_llm_server.chat_requests()) == 1


def test_thinking_and_fences_are_stripped_before_parsing(fake_llm_server: FakeOpenAIServer) -> None:
    answer = json.dumps({"ok": True, "echo": "inside"})
    fake_llm_server.responder = lambda body: (
        f'<think>maybe {{"ok": false}} ...</think>\n```json\n{answer}\n```'
    )
    with make_client(fake_llm_server) as client:
        result = client.structured(make_request(), LLMCheckReply)
    assert result.status == "ok" and result.value == LLMCheckReply(ok=True, echo="inside")


def test_strip_helpers() -> None:
    assert strip_thinking("<think>a</think> x <think>b</think>y") == "x y"
    assert strip_thinking("reasoning without an opening tag</think>\n{}") == "{}"
    assert strip_thinking('<think>never finished {"ok": true}') == ""
    assert strip_thinking("plain") == "plain"
    assert strip_fences('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fences("```\n[1]\n```") == "[1]"
    assert strip_fences('{"a": "```"}') == '{"a": "```"}'


def test_text_reply_has_no_schema_and_is_stripped(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.responder = lambda body: "<think>hmm</think>  The answer is Rick.  "
    with make_client(fake_llm_server) as client:
        result = client.text(make_request())
    assert result.status == "ok" and result.value == "The answer is Rick."
    [sent] = fake_llm_server.chat_requests()
    assert "response_format" not in sent.body and "guided_json" not in sent.body


# -- cache -------------------------------------------------------------------------------


def test_second_identical_call_is_served_from_cache(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    cache = LLMCache(tmp_path / "cache")
    with make_client(fake_llm_server, cache=cache) as client:
        first = client.structured(make_request(), Extraction)
        fake_llm_server.reset()
        second = client.structured(make_request(), Extraction)
    assert first.status == "ok" and second.status == "cached" and second.value == first.value
    assert fake_llm_server.counts["chat"] == 0
    [row] = second.calls
    assert row["status"] == "cached" and row["attempt"] == 0 and row["call_key"] == first.call_key
    assert (row["prompt_tokens"], row["completion_tokens"], row["latency_ms"]) == (0, 0, 0.0)
    assert_llm_calls_conform(second.calls)


def test_cache_survives_moving_the_server_and_changing_key_and_timeouts(tmp_path: Path) -> None:
    cache_root = tmp_path / "cache"
    with (
        FakeOpenAIServer(model_names=(TEST_MODEL,)) as old,
        FakeOpenAIServer(model_names=(TEST_MODEL,)) as new,
    ):
        with OpenAICompatibleClient(
            fast_llm_settings(old.url), api_key="key-one", cache=LLMCache(cache_root)
        ) as a:
            first = a.structured(make_request(), Extraction)
        settings = fast_llm_settings(
            new.root_url, timeout_s=9.0, deadline_s=99.0, max_retries=0, concurrency=2
        )
        with OpenAICompatibleClient(settings, api_key="key-two", cache=LLMCache(cache_root)) as b:
            second = b.structured(make_request(), Extraction)
        assert new.counts["chat"] == 0 and old.counts["chat"] == 1
    assert second.status == "cached" and second.call_key == first.call_key


def test_failures_are_not_cached(fake_llm_server: FakeOpenAIServer, tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache")
    fake_llm_server.queue_faults("refusal")
    with make_client(fake_llm_server, cache=cache) as client:
        assert client.structured(make_request(), Extraction).status == "refused"
        assert len(cache) == 0
        assert client.structured(make_request(), Extraction).status == "ok"
        assert client.structured(make_request(), Extraction).status == "cached"
    assert fake_llm_server.counts["chat"] == 2


def test_a_reasked_success_is_cached_under_the_original_request(
    fake_llm_server: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_llm_server.queue_faults("malformed_json", "length")
    with make_client(fake_llm_server, cache=LLMCache(tmp_path)) as client:
        first = client.structured(make_request(), Extraction)
        second = client.structured(make_request(), Extraction)
    assert statuses(first) == ["invalid", "truncated", "ok"] and second.status == "cached"
    assert {row["call_key"] for row in first.calls + second.calls} == {first.call_key}


# -- secrecy of the API key ----------------------------------------------------------------


def test_api_key_never_leaks_into_rows_errors_or_logs(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with FakeOpenAIServer(model_names=(TEST_MODEL,), echo_auth=True) as server:
        server.queue_faults("http_400", "http_500", "http_500", "http_500")
        with make_client(server, api_key=SECRET, max_retries=2) as client:
            rejected = client.structured(make_request("a"), Extraction)
            failed = client.structured(make_request("b"), Extraction)
            client.model = "missing-model"
            missing = client.structured(make_request("c"), Extraction)
        assert all(r.headers["Authorization"] == f"Bearer {SECRET}" for r in server.requests)  # it was sent
    results = [rejected, failed, missing]
    assert [r.status for r in results] == ["error"] * 3
    assert "received Authorization" in rejected.error  # the echoed body did reach the message, scrubbed
    leaked = json.dumps([[r.calls, r.error, r.failure_row()] for r in results]) + caplog.text
    assert SECRET not in leaked and "0123456789abcdef" not in leaked


def test_list_models_error_is_scrubbed() -> None:
    with FakeOpenAIServer(model_names=(TEST_MODEL,), echo_auth=True) as server:
        settings = fast_llm_settings(server.url + "/wrong")
        with OpenAICompatibleClient(settings, api_key=SECRET) as client:
            with pytest.raises(Exception) as caught:
                client.list_models()
    assert SECRET not in str(caught.value)


# -- concurrency ---------------------------------------------------------------------------


def test_map_structured_keeps_order_and_reaches_the_concurrency_bound() -> None:
    latency, n = 0.2, 48
    with FakeOpenAIServer(model_names=(TEST_MODEL,), latency_s=latency) as server:
        with make_client(server, concurrency=16) as client:
            requests = [make_request(f"chunk-{i}", f"text number {i}") for i in range(n)]
            results = client.map_structured(requests, LLMCheckReply)
        # The bound is reached and never passed; counted by the server, so a loaded host cannot fail it.
        assert 12 <= server.max_in_flight <= 16
    assert [r.request.item_id for r in results] == [f"chunk-{i}" for i in range(n)]
    assert all(r.status == "ok" for r in results)
    assert len({r.value.echo for r in results}) == n  # each answer derived from its own prompt


def test_concurrent_callers_share_one_bound() -> None:
    with FakeOpenAIServer(model_names=(TEST_MODEL,), latency_s=0.05) as server:
        with make_client(server, concurrency=3) as client:

            def batch(prefix: str) -> None:
                client.map_structured(
                    [make_request(f"{prefix}-{i}", f"{prefix} {i}") for i in range(9)], LLMCheckReply
                )

            threads = [threading.Thread(target=batch, args=(p,)) for p in ("a", "b", "c")]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        assert server.counts["chat"] == 27 and server.max_in_flight == 3


def test_mixed_fault_rate_never_yields_partial_values() -> None:
    with FakeOpenAIServer(model_names=(TEST_MODEL,)) as server:
        server.set_fault_rate(
            0.3, kinds=("malformed_json", "schema_invalid", "length", "http_429", "http_500", "refusal")
        )
        with make_client(server, max_retries=4, concurrency=8) as client:
            results = client.map_structured(
                [make_request(f"c{i}", f"passage {i}") for i in range(40)], Extraction
            )
        faults = {r.fault for r in server.chat_requests()} - {None}
    assert len(faults) >= 4  # the rate really mixes kinds
    assert sum(r.ok for r in results) >= 30
    for result in results:
        if result.ok:
            assert isinstance(result.value, Extraction) and result.calls[-1]["status"] == "ok"
        else:
            assert (
                result.status in {"invalid", "truncated", "refused", "error"}
                and result.failure_row() is not None
            )
    assert_llm_calls_conform([row for r in results for row in r.calls])


# -- construction and `nkw llm check` ------------------------------------------------------


def test_build_llm_client(tmp_path: Path) -> None:
    assert build_llm_client(LLMSettings(), None, tmp_path) is None
    client = build_llm_client(LLMSettings(url="http://127.0.0.1:9"), "k", tmp_path)
    assert client is not None and client.cache is not None and client.model == LLMSettings().model
    client.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_check_server_messages(fake_llm_server: FakeOpenAIServer) -> None:
    ok, message = check_server(fast_llm_settings(fake_llm_server.url), SECRET)
    assert ok and message.startswith("ok: test-model") and message.endswith(" ms")

    ok, message = check_server(fast_llm_settings(f"http://127.0.0.1:{_free_port()}"), SECRET)
    assert not ok and "not reachable" in message

    ok, message = check_server(fast_llm_settings(fake_llm_server.root_url + "/not-an-api"), SECRET)
    assert not ok and "not an OpenAI-compatible API" in message and "404" in message

    ok, message = check_server(fast_llm_settings(fake_llm_server.url, model="other/model"), SECRET)
    assert not ok and "'other/model' is not served" in message and "test-model" in message

    fake_llm_server.queue_faults("refusal")
    ok, message = check_server(fast_llm_settings(fake_llm_server.url), SECRET)
    assert not ok and "refused" in message

    fake_llm_server.api_key = "the-right-key"
    ok, message = check_server(fast_llm_settings(fake_llm_server.url), SECRET)
    assert not ok and "rejected the API key (HTTP 401)" in message and SECRET not in message
    assert check_server(fast_llm_settings(fake_llm_server.url), "the-right-key")[0]

    ok, message = check_server(LLMSettings(), None)
    assert not ok and "not set" in message
    for text in (message,):
        assert "\n" not in text and SECRET not in text


# -- the fake server itself ----------------------------------------------------------------


class Node(BaseModel):
    label: str = Field(min_length=12)
    children: list["Node"] = []
    weight: int = Field(gt=3, le=10)
    kind: Literal["a", "b"] | None = None


def test_schema_instance_validates_nested_refs_and_bounds() -> None:
    for model in (Extraction, Node, LLMCheckReply):
        instance = schema_instance(model.model_json_schema(), seed="x")
        model.model_validate(instance)
    assert schema_instance(Node.model_json_schema(), "x") == schema_instance(Node.model_json_schema(), "x")
    assert schema_instance(Node.model_json_schema(), "x") != schema_instance(Node.model_json_schema(), "y")


def test_fake_embeddings_are_deterministic_unit_vectors(fake_llm_server: FakeOpenAIServer) -> None:
    fake_llm_server.embedding_dim = 16
    body = {"model": TEST_MODEL, "input": ["alpha", "beta", "alpha"]}
    data = httpx.post(f"{fake_llm_server.url}/embeddings", json=body).json()["data"]
    vectors = [item["embedding"] for item in data]
    assert len(vectors[0]) == 16 and vectors[0] == vectors[2] and vectors[0] != vectors[1]
    assert abs(sum(v * v for v in vectors[1]) - 1.0) < 1e-9
    assert fake_llm_server.counts["embeddings"] == 1
