"""The LLM client for OpenAI-compatible servers (vLLM), implementing `tasks.llm.client.protocol.LLMClient`.

Clients are built by `tasks.llm.client.factory.build_llm_client` and injected into stages, never
created at import.
Every attempt becomes one `llm_calls` row; a call that cannot produce a validated value ends
with `value=None` and a `failures` row, never an empty or partial object.
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, Sequence, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from schemas.config import LLMSettings
from schemas.responses.agent import ToolStep
from schemas.responses.batched import fixed_count_schema
from tasks.llm.client.cache import LLMCache, cache_key
from tasks.llm.client.cached_replies import cached_result, store_reply
from tasks.llm.client.deadline import deadline_http_client
from tasks.llm.client.http import DUMMY_API_KEY, HTTPCallError, api_base, chat_payload, get_models, scrub
from tasks.llm.client.pool import server_pool
from tasks.llm.client.protocol import LLMRequest, LLMResult, call_row, with_fields
from tasks.llm.client.replies import (
    REASK,
    REASK_TOOLS,
    clip_overlong,
    error_summary,
    llguidance_grammar,
    parse_tool_step,
    parsed_or_none,
    prompt_chars,
    redact_reply,
    response_schema,
    strip_fences,
    strip_thinking,
    tool_step_text,
)
from tasks.llm.client.retry import attempt_timeout, backoff_delay, larger_reply_limit
from tasks.llm.client.salvage import Salvage, closed_after_whitespace_loop, salvage_cut_reply
from tasks.llm.client.server_fit import MIN_REPLY_TOKENS, ServerFit
from tasks.llm.client.streaming import DEADLINE_FINISH, stream_payload

log = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

CACHE_VERSION = "2"  # bump when the meaning of a cached reply changes (2: fields in the prompt)
MIN_ATTEMPT_S = 0.05  # an attempt with less of the deadline left cannot usefully start


class OpenAICompatibleClient:
    """LLMClient over an OpenAI-compatible HTTP API, with retries, re-asks, a cache and bounded
    concurrency."""

    def __init__(
        self,
        settings: LLMSettings,
        api_key: str | None = None,
        cache: LLMCache | None = None,
        http_client: httpx.Client | None = None,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if not settings.url:
            raise ValueError("llm.url is not set: there is no server to talk to")
        self.settings = settings
        self.model = settings.model
        self.base_url = api_base(settings.url)
        self.cache = cache
        self._secret = api_key or None
        # The key lives only in this header dict; it is never put in rows, errors or logs.
        self._headers = {"Authorization": f"Bearer {api_key or DUMMY_API_KEY}"}
        self._owns_http = http_client is None
        self._http = http_client or deadline_http_client(
            httpx.Limits(
                max_connections=settings.concurrency + 4, max_keepalive_connections=settings.concurrency
            ),
            timeout=settings.timeout_s,
        )
        self._sleep = sleep
        self._rng = rng or random.Random(0)
        self._rng_lock = threading.Lock()
        # Shared by every client of this server in the process: documents and stages together
        # respect one bound, and all of them can keep the server busy.
        self.pool = server_pool(self.base_url, settings.concurrency)
        self.fit = ServerFit(settings, self._http, self.base_url, self._headers, self.pool, self._clean)

    def __enter__(self) -> "OpenAICompatibleClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connection pool (only when this client created it)."""
        if self._owns_http:
            self._http.close()

    def list_models(self) -> list[str]:
        """Model ids served at the base URL; raises HTTPCallError (with the key scrubbed)."""
        try:
            with self.pool.slot():
                return get_models(self._http, self.base_url, self._headers, self.settings.timeout_s)
        except HTTPCallError as exc:
            raise HTTPCallError(exc.kind, self._clean(str(exc)), exc.http_status, exc.retry_after) from None

    def structured(self, request: LLMRequest, response_model: type[M]) -> LLMResult[M]:
        """One validated `response_model` instance for `request`, or a failure result."""
        self.fit.learn_slots()  # the server's kind decides which schema it is sent
        name, schema_json, fields = response_schema(response_model, self.pool.keeps_string_lengths)
        if request.fields_from is not None:
            fields = response_schema(request.fields_from, self.pool.keeps_string_lengths)[2]
        schema = json.loads(schema_json)
        if request.answer_count:  # a grouped reply: exactly n answers, numbered 1..n
            schema = fixed_count_schema(schema, request.answer_count)

        def parse(content: str) -> M:
            return response_model.model_validate_json(strip_fences(strip_thinking(content)))

        # The server enforces the schema but does not show it to the model: the fields go in the prompt.
        request = with_fields(request, fields)
        if self.settings.grammar == "llguidance":
            structure: dict[str, Any] = {"grammar": llguidance_grammar(response_model, request.answer_count)}
            shape: dict[str, Any] = structure  # the cache key: what the server was asked for
        else:
            shape = schema  # keys of the schema alone, as before the grammar setting existed
            json_schema = {"name": name, "schema": schema}
            structure = {"response_format": {"type": "json_schema", "json_schema": json_schema}}

        def salvage(content: str) -> Salvage | None:
            return salvage_cut_reply(content, response_model)

        return self._call(request, parse, shape, structure, salvage=salvage)

    def text(self, request: LLMRequest) -> LLMResult[str]:
        """A free-text reply (reasoning stripped) for `request`, or a failure result."""

        def parse(content: str) -> str:
            text = strip_thinking(content)
            if not text:
                raise ValueError("empty reply")
            return text

        return self._call(request, parse, None, None)

    def tool_step(self, request: LLMRequest, tools: list[dict[str, Any]]) -> LLMResult[ToolStep]:
        """One native function-calling step (`tool_choice: auto`): the model's text and/or tool calls.

        Tool arguments are returned as the model wrote them; validating them is the caller's job."""
        return self._call(request, parse_tool_step, None, None, tools=tools)

    def map_structured(self, requests: Iterable[LLMRequest], response_model: type[M]) -> list[LLMResult[M]]:
        """`structured` over many requests, `settings.concurrency` at a time, results in request order.

        `requests` may be lazy (a generator): each request is sent as soon as it is produced, so
        rendering the next prompts overlaps with the requests already in flight. There are more
        workers than slots: a worker parsing and validating its reply has released its slot, and
        another worker is already waiting to take it (the server pool still bounds what is in flight).
        Below 4 slots, one worker per slot: requests (and their re-asks) keep their order.
        """
        limit = self.settings.concurrency
        workers = limit + limit // 2 if limit >= 4 else limit
        if isinstance(requests, Sequence):
            if not requests:
                return []
            workers = min(workers, len(requests))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm") as pool:
            futures = [pool.submit(self.structured, request, response_model) for request in requests]
            return [future.result() for future in futures]

    # -- one logical call --------------------------------------------------------------

    def _call(
        self,
        request: LLMRequest,
        parse: Callable[[str], T],
        shape: dict[str, Any] | None,
        structure: dict[str, Any] | None,
        tools: list[dict[str, Any]] | None = None,
        salvage: Callable[[str], Salvage | None] | None = None,
    ) -> LLMResult[T]:
        s = self.settings
        sampling = {
            "temperature": s.temperature if request.temperature is None else request.temperature,
            "max_tokens": request.max_tokens or s.max_tokens,
            "enable_thinking": s.enable_thinking,
        }
        if request.seed is not None:
            sampling["seed"] = request.seed  # only when set, so unseeded requests keep their cache keys
        # The offered tools shape the reply as much as a schema does, so they are part of the key.
        key = cache_key(
            self.model,
            request.messages,
            sampling,
            shape if tools is None else {"tools": tools},
            CACHE_VERSION,
        )
        hit = cached_result(self.cache, request, key, self.model, parse)
        if hit is not None:
            return hit
        messages = [dict(m) for m in request.messages]
        calls: list[dict[str, Any]] = []
        deadline = time.monotonic() + s.deadline_s
        reasked = length_retried = False
        retries = timeouts = 0
        content: str | None = None

        unanswered = False  # the last attempt got no reply from the server at all

        def fail(status: str, error: str) -> LLMResult[T]:
            log.info(
                "llm %s %s failed after %d attempt(s): %s", request.stage, request.item_id, len(calls), error
            )
            raw = self._clean(content or "") or None
            return LLMResult(request, None, status, error, calls, raw, server_failed=unanswered)

        room = self.fit.reply_room(messages, tools)
        if room is not None and room < MIN_REPLY_TOKENS:
            # Not sent: the server would cut the reply at once (or refuse). A grouped stage splits
            # the group; a single item becomes a failures row naming the sizes.
            return fail(
                "truncated",
                f"the prompt (about {self.fit.prompt_tokens(messages, tools)} tokens) leaves {max(room, 0)} "
                f"tokens for a reply in the server's context of {self.fit.context()} tokens",
            )
        max_tokens = sampling["max_tokens"] if room is None else min(sampling["max_tokens"], room)

        while True:
            remaining = deadline - time.monotonic()
            if remaining < MIN_ATTEMPT_S:
                last = calls[-1] if calls else {"status": "timeout", "error": None}
                return fail(
                    last["status"],
                    self._clean(f"deadline of {s.deadline_s:g}s reached; last: {last['error']}"),
                )
            if reasked:  # the re-ask's messages (the bad reply, the correction) take room too
                room = self.fit.reply_room(messages, tools)
                if room is not None and room < MIN_REPLY_TOKENS:
                    return fail("invalid", f"{calls[-1]['error']} (no room left in the context to ask again)")
                max_tokens = max_tokens if room is None else min(max_tokens, room)
            # A slow server (a small model on a CPU) is not asked for more than it can write before the
            # call's deadline: the reply ends at its limit, and its complete items are kept.
            affordable = self.pool.pacing.affordable_tokens(remaining)
            if affordable is not None:
                max_tokens = max(MIN_REPLY_TOKENS, min(max_tokens, affordable))
            payload = chat_payload(
                self.model, messages, sampling["temperature"], max_tokens, structure, tools, s.enable_thinking
            )
            if request.seed is not None:
                payload["seed"] = request.seed
            paced = self.pool.pacing.timeout_for(max_tokens, s.timeout_s)
            timeout = attempt_timeout(paced, timeouts, remaining)
            # Streamed, the paced timeout bounds a silence, and only the call's deadline the reply.
            streamed = s.stream and tools is None
            payload = stream_payload(payload) if streamed else payload
            allowed, silence = (remaining, timeout) if streamed else (timeout, None)
            self.fit.learn_slots()
            started = time.perf_counter()
            try:
                reply = self.pool.post_chat(
                    self._http, self.base_url, self._headers, payload, allowed, silence
                )
            except HTTPCallError as exc:
                error = self._clean(str(exc))
                calls.append(call_row(request, key, self.model, len(calls), exc.status, started, None, error))
                timeouts += exc.kind == "timeout"
                unanswered = exc.retryable
                if not exc.retryable or retries >= s.max_retries:
                    return fail(exc.status, error)
                delay = self._backoff(retries, exc.retry_after)
                retries += 1
                if time.monotonic() + delay >= deadline - MIN_ATTEMPT_S:
                    return fail(exc.status, self._clean(f"{error} (deadline of {s.deadline_s:g}s reached)"))
                log.info(
                    "llm %s %s: %s; retry %d in %.2fs", request.stage, request.item_id, error, retries, delay
                )
                self._sleep(delay)
                continue
            unanswered = False
            self.pool.pacing.observe(
                reply.completion_tokens or reply.streamed_tokens,
                time.perf_counter() - started,
                prompt_chars(messages, tools),
                reply.prompt_tokens,
            )
            # Whatever the server sent back is redacted before it is parsed, cached or stored: a
            # server (or proxy) that echoes the request headers must not put the key in a row.
            reply = redact_reply(reply, self._secret)
            content = reply.content if tools is None else tool_step_text(reply)
            if reply.refusal is not None or reply.finish_reason == "content_filter":
                error = self._clean(reply.refusal or "finish_reason=content_filter")
                calls.append(call_row(request, key, self.model, len(calls), "refused", started, reply, error))
                return fail("refused", error)
            if reply.finish_reason in ("length", DEADLINE_FINISH):
                larger = larger_reply_limit(max_tokens, s.max_tokens_retry, room)
                error = f"finish_reason=length at max_completion_tokens={max_tokens}"
                out_of_time = reply.finish_reason == DEADLINE_FINISH  # no time left to ask again
                if out_of_time:
                    error = f"the call's deadline of {s.deadline_s:g}s came while the model was writing"
                calls.append(
                    call_row(request, key, self.model, len(calls), "truncated", started, reply, error)
                )
                final = out_of_time or length_retried or larger <= max_tokens
                closed = closed_after_whitespace_loop(content or "") if salvage is not None else None
                whole = parsed_or_none(parse, closed) if closed is not None else None
                if whole is not None:  # every answer was written; only spaces followed
                    note = "; the reply was whole, then only whitespace: closed"
                    calls[-1] = {**calls[-1], "status": "salvaged", "error": self._clean(error + note)}
                    return LLMResult(request, whole, "ok", None, calls, closed)
                kept = salvage(content or "") if salvage is not None else None
                value = parsed_or_none(parse, kept.content) if kept is not None else None
                # A model repeating items word for word is looping: more tokens buy more repeats.
                if value is not None and (final or kept.repeats):
                    note = f"; kept {kept.kept} complete item(s), dropped {kept.repeats} repeat(s)"
                    calls[-1] = {**calls[-1], "status": "salvaged", "error": self._clean(error + note)}
                    return LLMResult(request, value, "ok", None, calls, kept.content)
                if final:
                    # Never the same request again: a grouped stage splits the group instead.
                    why = f"; no larger limit fits (context {self.fit.context()})"
                    why = "" if length_retried or out_of_time else why
                    return fail("truncated", error + why)
                length_retried, max_tokens = True, larger
                continue
            try:
                value = parse(content or "")
            except (ValidationError, ValueError) as exc:
                is_schema = isinstance(exc, ValidationError)
                clipped = clip_overlong(content or "", exc) if is_schema else None
                value = parsed_or_none(parse, clipped) if clipped is not None else None
                if value is not None:  # only strings or lists over their bound: cut
                    calls.append(call_row(request, key, self.model, len(calls), "ok", started, reply, None))
                    store_reply(self.cache, key, clipped, reply, self.model)
                    return LLMResult(request, value, "ok", None, calls, clipped)
                error = self._clean(error_summary(exc))
                calls.append(call_row(request, key, self.model, len(calls), "invalid", started, reply, error))
                if reasked:
                    return fail("invalid", error)
                reasked = True
                said = content if tools is None else reply.content
                messages += [
                    {"role": "assistant", "content": said or ""},
                    {
                        "role": "user",
                        "content": (REASK if tools is None else REASK_TOOLS).format(error=error[:1000]),
                    },
                ]
                continue
            calls.append(call_row(request, key, self.model, len(calls), "ok", started, reply, None))
            store_reply(self.cache, key, content or "", reply, self.model)
            return LLMResult(request, value, "ok", None, calls, content)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        with self._rng_lock:
            jitter = self._rng.uniform(0.5, 1.5)
        return backoff_delay(self.settings.backoff_s, retry, retry_after, jitter)

    def _clean(self, text: str) -> str:
        return scrub(text, self._secret)
