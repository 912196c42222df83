"""An LLM client wrapper that keeps every llm_calls row (and a failures row for every item
that got no value) of the calls made through it: query-time accounting for one question."""

from __future__ import annotations

import threading
from typing import Any, Iterable

from tasks.llm.client.protocol import LLMClient, LLMRequest, LLMResult


class RecordingClient:
    def __init__(self, inner: LLMClient) -> None:
        self.inner = inner
        self.model = inner.model
        self.calls: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def _keep(self, result: LLMResult) -> LLMResult:
        with self._lock:
            self.calls.extend(result.calls)
            failure = result.failure_row()
            if failure is not None:
                self.failures.append(failure)
        return result

    def structured(self, request: LLMRequest, response_model: type) -> LLMResult:
        return self._keep(self.inner.structured(request, response_model))

    def text(self, request: LLMRequest) -> LLMResult:
        return self._keep(self.inner.text(request))

    def tool_step(self, request: LLMRequest, tools: list[dict[str, Any]]) -> LLMResult:
        return self._keep(self.inner.tool_step(request, tools))

    def map_structured(self, requests: Iterable[LLMRequest], response_model: type) -> list[LLMResult]:
        return [self._keep(result) for result in self.inner.map_structured(requests, response_model)]
