"""`nkw llm check`: whether the configured server is up, serves the model, and answers one tiny
structured request — each failure named in one line (unreachable, timeout, key, not the API).
"""

from __future__ import annotations

import time

from schemas.config import LLMSettings
from schemas.responses.base import LLMCheckReply
from tasks.llm.client.http import HTTPCallError, api_base, display_url, one_line
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest


def check_server(settings: LLMSettings, api_key: str | None) -> tuple[bool, str]:
    """`nkw llm check`: is the server up, is the model served, does a tiny structured request work?"""
    if not settings.url:
        return False, "no LLM configured (llm.url is not set): stages use the embedded heuristic default"
    where = display_url(api_base(settings.url))
    # A check reports what is wrong now: no retries, and a deadline of one request.
    quick = settings.model_copy(update={"max_retries": 0, "deadline_s": settings.timeout_s, "concurrency": 1})
    with OpenAICompatibleClient(quick, api_key) as client:
        try:
            models = client.list_models()
        except HTTPCallError as exc:
            return False, _check_failure(where, exc, settings.timeout_s)
        if settings.model not in models:
            served = ", ".join(models) or "none"
            return False, f"model {settings.model!r} is not served at {where}; served models: {served}"
        request = LLMRequest(
            stage="llm_check",
            item_id="llm_check",
            doc_id=None,
            prompt_id="llm_check/v1",
            prompt_hash="",
            max_tokens=64,
            messages=(
                {"role": "system", "content": "Answer with one JSON object only."},
                {"role": "user", "content": 'Reply with {"ok": true, "echo": "nkw"}.'},
            ),
        )
        started = time.perf_counter()
        result = client.structured(request, LLMCheckReply)
        ms = (time.perf_counter() - started) * 1000
    if result.value is None:
        return False, one_line(
            f"{settings.model} at {where} failed a structured request ({result.status}): {result.error}"
        )
    return True, f"ok: {settings.model} at {where} answered a structured request in {ms:.0f} ms"


def _check_failure(where: str, exc: HTTPCallError, timeout_s: float) -> str:
    if exc.kind == "connect":
        return (
            f"LLM server at {where} is not reachable (connection refused or host down): "
            f"{one_line(str(exc), 160)}"
        )
    if exc.kind == "timeout":
        return f"LLM server at {where} did not answer GET /models within {timeout_s:g}s"
    if exc.http_status in (401, 403):
        return f"LLM server at {where} rejected the API key (HTTP {exc.http_status})"
    if exc.http_status == 404 or exc.kind == "protocol":
        return (
            f"{where} is not an OpenAI-compatible API (GET /models: {one_line(str(exc), 120)}); check llm.url"
        )
    return f"LLM server at {where} failed GET /models: {one_line(str(exc), 200)}"
