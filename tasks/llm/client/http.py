"""HTTP plumbing of the OpenAI-compatible client: base URLs, the chat request body, one chat or
models request with its failures mapped to `HTTPCallError`, Retry-After parsing and secret scrubbing.

Plain httpx rather than the openai SDK so that status codes, Retry-After, `refusal` and
`finish_reason` are all visible and our own retry policy is the only one.
"""

from __future__ import annotations

import email.utils
import json
import re
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from tasks.llm.client.deadline import total_deadline
from tasks.llm.client.portable import portable_schema
from tasks.llm.client.retry import is_retryable

DUMMY_API_KEY = "EMPTY"  # what vLLM expects when it runs without --api-key
RETRY_AFTER_CAP_S = 60.0  # a server asking for longer must not stall a build
_BEARER = re.compile(r"(?i)(bearer\s+)[^\s\"',;]+")
_SK_TOKEN = re.compile(r"\bsk-[A-Za-z0-9_-]{8,}")


def api_base(url: str) -> str:
    """`http://host:port` or `http://host:port/v1` (trailing slash or not) -> `.../v1`."""
    url = url.strip().rstrip("/")
    return url if re.search(r"/v\d+$", url) else f"{url}/v1"


def display_url(url: str) -> str:
    """The URL without user:password, for messages."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def scrub(text: str, secret: str | None) -> str:
    """Remove the API key (and anything that looks like a bearer token or sk- key) from `text`."""
    if secret and secret != DUMMY_API_KEY:
        text = text.replace(secret, "***")
    return _SK_TOKEN.sub("sk-***", _BEARER.sub(r"\1***", text))


def one_line(text: str, limit: int = 300) -> str:
    """Whitespace collapsed to single spaces, cut to `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta seconds or HTTP date), capped; None if absent/bad."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), RETRY_AFTER_CAP_S)


class HTTPCallError(Exception):
    """One failed request. kind: timeout | connect | http | protocol."""

    def __init__(
        self, kind: str, message: str, http_status: int | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.http_status = http_status
        self.retry_after = retry_after

    @property
    def status(self) -> str:
        """The llm_calls status of this failure."""
        return "timeout" if self.kind == "timeout" else "error"

    @property
    def retryable(self) -> bool:
        return is_retryable(self.kind, self.http_status)


@dataclass(frozen=True)
class ChatReply:
    content: str | None
    refusal: str | None
    finish_reason: str | None
    prompt_tokens: int | None
    completion_tokens: int | None
    tool_calls: tuple[dict[str, Any], ...] = ()  # {"id", "name", "arguments"} per OpenAI `message.tool_calls`
    cached_prompt_tokens: int | None = None  # read from the server's prefix cache; None: not said
    streamed_tokens: int | None = None  # content events of a streamed reply (about one token each)


def request_json(
    client: httpx.Client,
    method: str,
    url: str,
    headers: dict[str, str],
    timeout: float,
    body: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One request; the decoded JSON object of a 2xx answer, anything else an HTTPCallError.

    `timeout` bounds the whole request (connect, headers and body together), not each read: a
    server trickling its reply a byte at a time is cut at `timeout` (see tasks.llm.client.deadline). The
    reply's size is bounded by the client's transport (see tasks.llm.client.bounded_reply)."""
    try:
        with total_deadline(timeout):
            response = client.request(method, url, headers=headers, json=body, timeout=timeout)
    except httpx.TimeoutException as exc:
        raise HTTPCallError("timeout", f"no answer within {timeout:.3g}s ({type(exc).__name__})") from None
    except httpx.TransportError as exc:
        raise HTTPCallError("connect", f"{type(exc).__name__}: {exc}") from None
    except httpx.DecodingError as exc:  # too large once decoded, or an encoding we do not decode
        raise HTTPCallError("protocol", str(exc)) from None
    if response.status_code >= 400:
        raise HTTPCallError(
            "http",
            f"HTTP {response.status_code}: {error_text(response)}",
            response.status_code,
            parse_retry_after(response.headers.get("retry-after")),
        )
    try:
        data = response.json()
    except ValueError:
        raise HTTPCallError(
            "protocol", f"HTTP {response.status_code} but the body is not JSON: {response.text[:120]!r}"
        ) from None
    if not isinstance(data, dict):
        raise HTTPCallError("protocol", f"expected a JSON object, got {type(data).__name__}")
    return data


def chat_payload(
    model: str,
    messages: list[dict[str, str]],
    temperature: float,
    max_tokens: int,
    structure: dict[str, Any] | None,
    tools: list[dict[str, Any]] | None,
    enable_thinking: bool,
) -> dict[str, Any]:
    """The body of one POST /chat/completions, with the vLLM extras at its top level.

    `max_completion_tokens`, not the deprecated `max_tokens`; no `guided_json` (ignored by vLLM
    since 0.12: `response_format` is the structured output); tools are `strict`, so a server
    that can constrain tool calls (vLLM) does, instead of letting a malformed call arrive as text.
    `structure` is how the reply's shape is asked: `{"response_format": ...}` or, for a llama.cpp
    server built with llguidance, `{"grammar": ...}`."""
    payload: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "temperature": temperature,
        "max_completion_tokens": max_tokens,
    }
    if structure is not None:
        payload.update(structure)
    if tools is not None:
        # vLLM serves this only with --enable-auto-tool-choice and a --tool-call-parser (hermes for Qwen).
        payload["tools"], payload["tool_choice"] = [strict_tool(tool) for tool in tools], "auto"
    # vLLM reads these "extra_body" fields at the top level of the request body.
    payload["chat_template_kwargs"] = {"enable_thinking": enable_thinking}
    # llama.cpp keeps a slot's prompt for the next request only when asked (older builds); vLLM
    # caches prefixes by itself and ignores the field.
    payload["cache_prompt"] = True
    return payload


def strict_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI function tool with `"strict": true` on its function and parameters every backend
    compiles (`portable_schema`); a copy, other tools unchanged."""
    function = tool.get("function")
    if tool.get("type") != "function" or not isinstance(function, dict):
        return tool
    parameters = portable_schema(function.get("parameters") or {"type": "object", "properties": {}})
    return {**tool, "function": {**function, "parameters": parameters, "strict": True}}


def post_chat(
    client: httpx.Client, base: str, headers: dict[str, str], payload: dict[str, Any], timeout: float
) -> ChatReply:
    """POST /chat/completions and pick out the first choice."""
    return chat_reply(request_json(client, "POST", f"{base}/chat/completions", headers, timeout, payload))


def chat_reply(data: dict[str, Any]) -> ChatReply:
    """The first choice of a chat completion body."""
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise HTTPCallError("protocol", "chat completion without choices")
    choice = choices[0]
    message = choice.get("message") or {}
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return ChatReply(
        content=message.get("content"),
        refusal=message.get("refusal") or None,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=usage.get("prompt_tokens"),
        completion_tokens=usage.get("completion_tokens"),
        tool_calls=_tool_calls(message.get("tool_calls")),
        cached_prompt_tokens=cached_prompt_tokens(data, usage),
    )


def cached_prompt_tokens(data: dict[str, Any], usage: dict[str, Any]) -> int | None:
    """Prompt tokens the server took from its prefix cache instead of computing them: vLLM (with
    `--enable-prompt-tokens-details`) and OpenAI say `usage.prompt_tokens_details.cached_tokens`;
    llama.cpp's server says `timings.cache_n`. None when the server says neither."""
    details = usage.get("prompt_tokens_details")
    if isinstance(details, dict) and isinstance(details.get("cached_tokens"), int):
        return details["cached_tokens"]
    timings = data.get("timings")
    if isinstance(timings, dict) and isinstance(timings.get("cache_n"), int):
        return timings["cache_n"]
    return None


def _tool_calls(raw: Any) -> tuple[dict[str, Any], ...]:
    """`message.tool_calls` flattened to {"id", "name", "arguments"}; odd entries are kept as far as
    they go, so the caller's validation (not this parser) decides what is unusable."""
    if not isinstance(raw, list):
        return ()
    calls = []
    for index, item in enumerate(raw):
        item = item if isinstance(item, dict) else {}
        function = item.get("function") if isinstance(item.get("function"), dict) else {}
        arguments = function.get("arguments")
        if isinstance(arguments, (dict, list)):  # some servers send parsed arguments
            arguments = json.dumps(arguments, ensure_ascii=False)
        calls.append(
            {
                "id": str(item.get("id") or f"call_{index}"),
                "name": function.get("name"),
                "arguments": "" if arguments is None else arguments,
            }
        )
    return tuple(calls)


def root_url(base: str) -> str:
    """The server's own root for an API base (`http://host:port/v1` -> `http://host:port`): where
    llama.cpp answers /props and /slots."""
    return re.sub(r"/v\d+$", "", base)


def server_slots(client: httpx.Client, base: str, headers: dict[str, str], timeout: float) -> int | None:
    """Requests the server decodes at once, where it says: llama.cpp's GET /props `total_slots`
    (vLLM has no such endpoint: None, as for any failure)."""
    try:
        data = request_json(client, "GET", f"{root_url(base)}/props", headers, timeout)
    except HTTPCallError:
        return None
    slots = data.get("total_slots")
    return slots if isinstance(slots, int) and not isinstance(slots, bool) and slots > 0 else None


def get_models(client: httpx.Client, base: str, headers: dict[str, str], timeout: float) -> list[str]:
    """GET /models: the ids the server serves."""
    return list(get_model_contexts(client, base, headers, timeout))


def get_model_contexts(
    client: httpx.Client, base: str, headers: dict[str, str], timeout: float
) -> dict[str, int | None]:
    """GET /models: each served id with its context length in tokens (None when not reported)."""
    data = request_json(client, "GET", f"{base}/models", headers, timeout)
    items = data.get("data")
    if not isinstance(items, list):
        raise HTTPCallError(
            "protocol", "GET /models answered without a 'data' list: not an OpenAI-compatible API"
        )
    return {
        str(item["id"]): context_length(item) for item in items if isinstance(item, dict) and item.get("id")
    }


def context_length(model: dict[str, Any]) -> int | None:
    """Prompt + reply tokens one request may use, from a /models entry: vLLM's `max_model_len`,
    else llama.cpp's `meta.n_ctx` (its per-slot context), else `meta.n_ctx_train`."""
    meta = model.get("meta") if isinstance(model.get("meta"), dict) else {}
    for value in (model.get("max_model_len"), meta.get("n_ctx"), meta.get("n_ctx_train")):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def error_text(response: httpx.Response) -> str:
    # OpenAI and vLLM put the reason in {"error": {"message": ...}} (vLLM also {"message": ...}).
    try:
        data = response.json()
    except ValueError:
        return response.text[:300] or response.reason_phrase
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if isinstance(error, str):
            return error
        if data.get("message"):
            return str(data["message"])
    return json.dumps(data)[:300]
