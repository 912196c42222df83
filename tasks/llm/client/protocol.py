"""The LLM client protocol and the types it speaks: the request, its result, and the
`llm_calls` row of each attempt (the result builds its own `failures` row).

Separate from the OpenAI-compatible client because this interface is what stages and wrappers
(the recorder, grouped requests, the judge, test doubles) rely on, while HTTP, retries and the
cache are one implementation of it; the row is here because every client returns such rows in
`LLMResult.calls` and callers keep them.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Iterable, Protocol, TypeVar

from pydantic import BaseModel

from schemas.responses.agent import ToolStep
from tasks.llm.client.http import ChatReply, one_line

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class LLMRequest:
    stage: str
    item_id: str
    doc_id: str | None
    prompt_id: str  # "<stage>/<version>"
    prompt_hash: str
    messages: tuple[dict[str, str], ...]
    max_tokens: int | None = None  # None -> settings.max_tokens
    temperature: float | None = None  # None -> settings.temperature
    seed: int | None = (
        None  # sent to the server and part of the cache key: sample n is never sample m's reply
    )
    # A grouped request's number of numbered answers: the schema sent asks for exactly this many,
    # numbered 1..n (schemas.responses.batched.fixed_count_schema). None: the model's own schema.
    answer_count: int | None = None
    # The model whose fields the prompt lists, when it is not the one the reply must follow: a request
    # for the rest of a cut reply keeps the whole reply's instructions, byte for byte, so the server
    # reads them (and the passage after them) from its prefix cache. None: the reply's own model.
    fields_from: type[BaseModel] | None = None

    @property
    def prompt_version(self) -> str:
        return self.prompt_id.split("/", 1)[1] if "/" in self.prompt_id else ""


@dataclass
class LLMResult(Generic[T]):
    request: LLMRequest
    value: T | None  # validated model (structured) or str (text); None on failure
    status: str  # ok | cached | error | invalid | truncated | timeout | refused
    error: str | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    raw: str | None = None  # the last reply content, for failure payloads
    # The server did not answer (connection, timeout, 429 or 5xx after the retries): another server
    # of the same model may (tasks.llm.client.routing).
    server_failed: bool = False

    @property
    def ok(self) -> bool:
        return self.value is not None

    @property
    def call_key(self) -> str:
        return self.calls[0]["call_key"] if self.calls else ""

    def failure_row(self) -> dict[str, str] | None:
        """A `failures` row for this item when no value came back, else None."""
        if self.value is not None:
            return None
        payload = {
            "status": self.status,
            "prompt_id": self.request.prompt_id,
            "call_key": self.call_key,
            "attempts": len(self.calls),
            "last_reply": (self.raw or "")[:2000],
        }
        return {
            "doc_id": self.request.doc_id or "",
            "stage": self.request.stage,
            "item_id": self.request.item_id,
            "error": f"llm {self.status}: {self.error or 'no value'}",
            "payload": json.dumps(payload, ensure_ascii=False),
        }


class LLMClient(Protocol):
    model: str

    def structured(self, request: LLMRequest, response_model: type[M]) -> LLMResult[M]: ...

    def text(self, request: LLMRequest) -> LLMResult[str]: ...

    def map_structured(
        self, requests: Iterable[LLMRequest], response_model: type[M]
    ) -> list[LLMResult[M]]: ...

    def tool_step(self, request: LLMRequest, tools: list[dict[str, Any]]) -> LLMResult[ToolStep]: ...


def call_row(
    request: LLMRequest,
    key: str,
    model: str,
    attempt: int,
    status: str,
    started: float | None,
    reply: ChatReply | None,
    error: str | None,
) -> dict[str, Any]:
    """The `llm_calls` row of one attempt (or cache hit) of `request`."""
    latency = 0.0 if started is None else round((time.perf_counter() - started) * 1000, 1)
    return {
        "call_key": key,
        "attempt": attempt,
        "doc_id": request.doc_id,
        "stage": request.stage,
        "item_id": request.item_id,
        "prompt_id": request.prompt_id,
        "prompt_version": request.prompt_version,
        "prompt_hash": request.prompt_hash,
        "model": model,
        "prompt_tokens": reply.prompt_tokens if reply else None,
        "completion_tokens": reply.completion_tokens if reply else None,
        "cached_prompt_tokens": reply.cached_prompt_tokens if reply else None,
        "latency_ms": latency,
        "finish_reason": reply.finish_reason if reply else None,
        "status": status,
        "error": one_line(error, 300) if error else None,
    }


def with_fields(request: LLMRequest, fields: str) -> LLMRequest:
    """`request` with the reply's fields appended to its system message (one is added if none)."""
    messages = [dict(m) for m in request.messages]
    if messages and messages[0].get("role") == "system":
        messages[0]["content"] = f"{messages[0].get('content') or ''}\n\n{fields}".lstrip()
    else:
        messages.insert(0, {"role": "system", "content": fields})
    return replace(request, messages=tuple(messages))
