"""Streamed chat replies: a timeout means silence, never slowness.

A small model on a CPU writes a few tokens a second; a 1,200-token reply takes minutes. A request
that waits for the whole reply cannot tell a slow server from a dead one, and cancels slow work
at its timeout. Streamed (`stream: true`), the server sends each token as it is written, so the
request is cut only when the server says nothing for `silence_s`; the call's deadline still bounds
the whole request (tasks.llm.client.deadline). Usage comes in the last event
(`stream_options.include_usage`; llama.cpp adds its `timings`). A server that ignores `stream`
and answers with one JSON body is read as before.
"""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from typing import Any, Callable, Iterable

import httpx

from tasks.llm.client.deadline import total_deadline
from tasks.llm.client.http import (
    ChatReply,
    HTTPCallError,
    cached_prompt_tokens,
    chat_reply,
    error_text,
    parse_retry_after,
    post_chat,
)

DEADLINE_FINISH = "deadline"  # finish reason of a stream cut at the call's deadline
DEADLINE_SLACK_S = 0.5  # a read timeout this close to the deadline is the deadline's


def stream_payload(payload: dict[str, Any]) -> dict[str, Any]:
    """`payload` asking for a streamed reply with its usage in the last event."""
    return {**payload, "stream": True, "stream_options": {"include_usage": True}}


def send_chat(
    client: httpx.Client,
    base: str,
    headers: dict[str, str],
    payload: dict[str, Any],
    timeout: float,
    silence_s: float | None = None,
    on_read: Callable[[], None] | None = None,
) -> ChatReply:
    """One chat request: streamed when the payload asks for it (cut after `silence_s` without a
    byte, and at `timeout` in all), else whole (cut at `timeout`). `on_read` is called once the
    server has read the prompt: at its first streamed event (a whole reply: when it comes)."""
    if not payload.get("stream"):
        reply = post_chat(client, base, headers, payload, timeout)
        if on_read is not None:
            on_read()
        return reply
    silence = min(silence_s or timeout, timeout)
    started = time.monotonic()
    left = lambda allowed: max(0.0, allowed - (time.monotonic() - started))  # noqa: E731
    phase = f"no answer within {silence:.3g}s"
    try:
        with ExitStack() as stack:
            with total_deadline(silence):  # the headers come at once from a server that streams
                url = f"{base}/chat/completions"
                response = stack.enter_context(
                    client.stream("POST", url, headers=headers, json=payload, timeout=silence)
                )
            if response.status_code >= 400:
                with total_deadline(left(silence)):
                    response.read()
                raise HTTPCallError(
                    "http",
                    f"HTTP {response.status_code}: {error_text(response)}",
                    response.status_code,
                    parse_retry_after(response.headers.get("retry-after")),
                )
            if "text/event-stream" not in response.headers.get("content-type", ""):
                with total_deadline(left(silence)):  # one JSON body: the whole reply within the timeout
                    response.read()
                return chat_reply(_json_object(response.text))
            phase = f"silent for {silence:.3g}s, or no end within {timeout:.3g}s"
            reader = EventReader()
            try:
                with total_deadline(left(timeout)):
                    for line in response.iter_lines():
                        if reader.feed(line):
                            break
                        if reader.seen and on_read is not None:
                            on_read()
                            on_read = None
            except httpx.TimeoutException:
                # Still writing when the call's time ran out: what it wrote is kept, as a reply cut
                # at its limit is (its complete items are salvaged); silence is a timeout.
                if left(timeout) > DEADLINE_SLACK_S or not any(reader.content):
                    raise
                return reader.reply(finish=DEADLINE_FINISH)
            return reader.reply()
    except httpx.TimeoutException as exc:
        raise HTTPCallError("timeout", f"{phase} ({type(exc).__name__})") from None
    except httpx.TransportError as exc:
        raise HTTPCallError("connect", f"{type(exc).__name__}: {exc}") from None
    except httpx.DecodingError as exc:
        raise HTTPCallError("protocol", str(exc)) from None


class EventReader:
    """A streamed reply as its events arrive: content and refusal deltas joined, the last finish
    reason, the usage (and llama.cpp's timings) of the event that carries it."""

    def __init__(self) -> None:
        self.content: list[str] = []
        self.refusal: list[str] = []
        self.finish: str | None = None
        self.usage: dict[str, Any] = {}
        self.last: dict[str, Any] = {}
        self.seen = False

    def feed(self, line: str) -> bool:
        """Read one line of the stream; True at its end (`[DONE]`)."""
        if not line.startswith("data:"):
            return False  # comments (": keep-alive"), event names, blank separators
        data = line[len("data:") :].strip()
        if data == "[DONE]":
            return True
        event = _json_object(data)
        if "error" in event:
            error = event["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise HTTPCallError("http", f"error in the stream: {message}")
        self.seen = True
        if isinstance(event.get("usage"), dict):
            self.usage, self.last = event["usage"], event
        elif isinstance(event.get("timings"), dict):
            self.last = event
        choices = event.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            delta = choices[0].get("delta") or {}
            self.content.append(str(delta.get("content") or ""))
            self.refusal.append(str(delta.get("refusal") or ""))
            self.finish = choices[0].get("finish_reason") or self.finish
        return False

    def reply(self, finish: str | None = None) -> ChatReply:
        """The reply read so far (`finish` overrides the server's finish reason: a cut stream)."""
        if not self.seen:
            raise HTTPCallError("protocol", "the stream ended without a reply")
        finish = finish or self.finish
        return ChatReply(
            content="".join(self.content) if any(self.content) or finish else None,
            refusal="".join(self.refusal) or None,
            finish_reason=finish,
            prompt_tokens=self.usage.get("prompt_tokens"),
            completion_tokens=self.usage.get("completion_tokens"),
            cached_prompt_tokens=cached_prompt_tokens(self.last, self.usage),
            streamed_tokens=sum(1 for piece in self.content if piece),
        )


def reply_from_events(lines: Iterable[str]) -> ChatReply:
    """The reply a whole stream of server-sent events spells."""
    reader = EventReader()
    for line in lines:
        if reader.feed(line):
            break
    return reader.reply()


def _json_object(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except ValueError:
        raise HTTPCallError("protocol", f"not JSON: {text[:120]!r}") from None
    if not isinstance(data, dict):
        raise HTTPCallError("protocol", f"expected a JSON object, got {type(data).__name__}")
    return data
