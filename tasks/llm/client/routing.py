"""Several servers of one model as one client.

Each document's requests go to one server, chosen by rendezvous hashing of the document id over
the server URLs: the server's prefix cache keeps the document's instructions and text warm, and
when a server is added or goes away only its own documents move. A request whose server does not
answer (connection refused, timeouts, 429/5xx after the client's retries) is sent to the next
server in its document's order, and the silent server is set aside for `cooldown_s` so the other
requests go straight to the next one. Nothing is lost or asked twice: the servers' clients share
one reply cache (keyed by what was asked, never by URL), and the attempts of every server are
kept, numbered in order, in the request's `llm_calls` rows.

A router in front of several servers (vLLM data parallel, LiteLLM, vllm-router) is one URL and
needs none of this.
"""

from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Callable, Iterable, Sequence, TypeVar

from pydantic import BaseModel

from schemas.responses.agent import ToolStep
from tasks.llm.client.http import HTTPCallError, display_url
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest, LLMResult

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
COOLDOWN_S = 30.0  # a server that did not answer is tried again after this long


def rendezvous_order(key: str, urls: Sequence[str]) -> list[int]:
    """Indexes of `urls` in the order `key` prefers them (highest hash of key and URL first)."""
    score = [hashlib.sha256(f"{key}\n{url}".encode("utf-8")).digest() for url in urls]
    return sorted(range(len(urls)), key=lambda i: score[i], reverse=True)


class RoutedClient:
    """The LLM client over several OpenAI-compatible servers of one model (see module doc)."""

    def __init__(
        self,
        clients: Sequence[OpenAICompatibleClient],
        cooldown_s: float = COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if len(clients) < 2:
            raise ValueError("a routed client needs at least two servers")
        if len({c.model for c in clients}) != 1:
            raise ValueError("every server of a routed client must serve the same model")
        self.clients = list(clients)
        self.model = clients[0].model
        self.settings = clients[0].settings
        self.base_url = " + ".join(display_url(c.base_url) for c in clients)
        self.pools = [c.pool for c in clients]
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._down_until: dict[int, float] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> "RoutedClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for client in self.clients:
            client.close()

    # -- where a request goes ------------------------------------------------------------

    def order(self, request: LLMRequest) -> list[int]:
        """The servers for `request`: its document's order, the ones set aside last."""
        preferred = rendezvous_order(request.doc_id or request.item_id, [c.base_url for c in self.clients])
        now = self._clock()
        with self._lock:
            resting = {i for i, until in self._down_until.items() if until > now}
        return [i for i in preferred if i not in resting] + [i for i in preferred if i in resting]

    def _set_aside(self, index: int) -> None:
        with self._lock:
            self._down_until[index] = self._clock() + self.cooldown_s

    def _route(
        self, request: LLMRequest, ask: Callable[[OpenAICompatibleClient], LLMResult[T]]
    ) -> LLMResult[T]:
        calls: list[dict[str, Any]] = []
        result: LLMResult[T] | None = None
        for index in self.order(request):
            result = ask(self.clients[index])
            # attempts on every server, numbered in order: (stage, item, key, attempt) stays a key
            calls += [{**row, "attempt": len(calls) + n} for n, row in enumerate(result.calls)]
            if result.ok or not result.server_failed:
                break
            self._set_aside(index)
        assert result is not None  # at least two servers
        return replace(result, calls=calls)

    # -- the client protocol ---------------------------------------------------------------

    def structured(self, request: LLMRequest, response_model: type[M]) -> LLMResult[M]:
        return self._route(request, lambda client: client.structured(request, response_model))

    def text(self, request: LLMRequest) -> LLMResult[str]:
        return self._route(request, lambda client: client.text(request))

    def tool_step(self, request: LLMRequest, tools: list[dict[str, Any]]) -> LLMResult[ToolStep]:
        return self._route(request, lambda client: client.tool_step(request, tools))

    def map_structured(self, requests: Iterable[LLMRequest], response_model: type[M]) -> list[LLMResult[M]]:
        """`structured` over many requests, results in request order; each server's own pool
        bounds what is in flight there, so the workers are the servers' slots together."""
        workers = sum(client.settings.concurrency for client in self.clients)
        workers += workers // 2
        if isinstance(requests, Sequence):
            if not requests:
                return []
            workers = min(workers, len(requests))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llm-routed") as pool:
            futures = [pool.submit(self.structured, request, response_model) for request in requests]
            return [future.result() for future in futures]

    def list_models(self) -> list[str]:
        """Models served by the first server that answers (the build's preflight); raises only when
        none answers."""
        error: HTTPCallError | None = None
        for client in self.clients:
            try:
                return client.list_models()
            except HTTPCallError as exc:
                error = exc
        assert error is not None
        raise error
