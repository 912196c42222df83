"""Validated replies in and out of the LLM cache, as the client's results and call rows."""

from __future__ import annotations

import logging
from typing import Callable, TypeVar

from pydantic import ValidationError

from tasks.llm.client.cache import LLMCache
from tasks.llm.client.http import ChatReply
from tasks.llm.client.protocol import LLMRequest, LLMResult, call_row

log = logging.getLogger(__name__)

T = TypeVar("T")


def cached_result(
    cache: LLMCache | None, request: LLMRequest, key: str, model: str, parse: Callable[[str], T]
) -> LLMResult[T] | None:
    """The stored reply for `key` as a "cached" result, or None on a miss."""
    payload = cache.get(key) if cache is not None else None
    if payload is None or not isinstance(payload.get("content"), str):
        return None
    try:
        value = parse(payload["content"])
    except (ValidationError, ValueError):
        return None  # a stored reply the current model class rejects is a miss, not a failure
    row = call_row(request, key, model, 0, "cached", None, None, None)
    finish = payload.get("finish_reason")
    row.update(prompt_tokens=0, completion_tokens=0, cached_prompt_tokens=0, latency_ms=0.0)
    row.update(finish_reason=finish)
    return LLMResult(request, value, "cached", None, [row], payload["content"])


def store_reply(cache: LLMCache | None, key: str, content: str, reply: ChatReply, model: str) -> None:
    """Keep a validated reply; a full disk costs a future re-ask, not this answer."""
    if cache is None:
        return
    usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
    try:
        stored = {"content": content, "finish_reason": reply.finish_reason, "model": model, "usage": usage}
        cache.put(key, stored)
    except OSError as exc:
        log.warning("llm cache write failed for %s: %s", key[:12], exc)
