"""Reading model replies: reasoning blocks and code fences stripped, the API key redacted, tool
steps parsed (a tool call written as text is not an answer), validation errors summarised in one
line, response schemas and their field lists derived once per model."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ValidationError

from schemas.responses.agent import ToolStep
from schemas.responses.batched import fixed_count_schema
from tasks.llm.client.fields import describe_fields
from tasks.llm.client.http import ChatReply, scrub
from tasks.llm.client.portable import portable_schema

_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL)
_FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n?(.*?)\n?\s*```$", re.DOTALL)


def strip_thinking(content: str) -> str:
    """Drop <think>…</think> blocks, a reasoning prefix ending in an orphan </think>, and an
    unterminated leading <think>."""
    text = _THINK_BLOCK.sub("", content)
    if "</think>" in text:  # templates that open <think> in the prompt leave only the closing tag
        text = text.rsplit("</think>", 1)[1]
    stripped = text.strip()
    if stripped.startswith("<think>"):  # reasoning that never ended: nothing usable follows
        return ""
    return stripped


def strip_fences(text: str) -> str:
    """The body of a ```json fenced block, or the text itself."""
    match = _FENCE.match(text.strip())
    return match.group(1).strip() if match else text.strip()


# What a re-ask says after a reply that could not be used.
REASK = (
    "Your previous reply could not be used: {error}\n"
    "Reply again with only one JSON object with the fields listed in the instructions, and nothing else."
)
REASK_TOOLS = (
    "Your previous reply could not be used: {error}\n"
    "Reply again: either call one or more of the offered tools, or answer in plain text without tool calls."
)

# Qwen's hermes-style template writes calls as <tool_call>{"name": ..., "arguments": ...}</tool_call>;
# a server whose parser missed one (or a model that wrote one freehand) leaves it in the content.
_TOOL_CALL_TAG = re.compile(r"<\s*/?\s*(tool_call|function_call|tools?)\b", re.IGNORECASE)
_CALL_JSON = re.compile(r'"name"\s*:\s*"[^"]*"\s*,\s*"(arguments|parameters)"\s*:', re.DOTALL)


@lru_cache(maxsize=128)
def response_schema(response_model: type[BaseModel], keep_lengths: bool = False) -> tuple[str, str, str]:
    """(schema name, JSON of the schema sent to the server, its fields written out for the prompt)
    of a response model; text, so the result is hashable and computed once per model and server kind."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", response_model.__name__)[:64]
    full = response_model.model_json_schema()
    # Keys in the model's order, as the prompt's field list has them: a grammar-enforcing server
    # (llama.cpp, vLLM's xgrammar and llguidance) writes properties in the order the schema lists
    # them, so sorted keys made a model write an entity's description before its name and the
    # extraction's facts before its relations. Cache keys sort the schema themselves.
    return name, json.dumps(portable_schema(full, keep_lengths)), describe_fields(full)


@lru_cache(maxsize=128)
def llguidance_grammar(response_model: type[BaseModel], answer_count: int | None = None) -> str:
    """The grammar field for a llama.cpp server built with llguidance: the model's whole JSON schema
    (llguidance takes string patterns and lengths, which stop a looping model's strings too).
    Whitespace stays free: held to one space, Qwen2.5-Coder-0.5B closed every list at once
    ('{"entities": [], ...}'), while pretty-printed it extracts (at about a third more tokens).

    A grouped reply (`answer_count` items) is written in a fixed frame: the brackets, commas and
    line breaks between the answers are literals, and each answer is its own schema. In a free frame
    a model that wanted to close the list after its first answer, where n are required, could only
    write whitespace, and did until its limit (llguidance repeats its whitespace token, so no pattern
    bounds the run): the answers after it were asked again."""
    # Keys in the model's order: llguidance writes properties in the order the schema lists them.
    schema = response_model.model_json_schema()
    if not answer_count:
        return "%llguidance {}\nstart: %json " + json.dumps(schema)
    fixed = fixed_count_schema(schema, answer_count)
    defs = {"$defs": fixed["$defs"]} if "$defs" in fixed else {}
    positions = fixed["properties"]["items"]["prefixItems"]
    names = [f"answer{k}" for k in range(1, len(positions) + 1)]
    frame = f" {json.dumps(ANSWER_GAP)} ".join(names)
    rules = [f"{name}: %json {json.dumps({**position, **defs})}" for name, position in zip(names, positions)]
    return "\n".join(
        ["%llguidance {}", f"start: {json.dumps(REPLY_OPEN)} {frame} {json.dumps(REPLY_CLOSE)}", *rules]
    )


# A grouped reply's frame, as the model pretty-prints it: `{"items": [ answer, answer ]}`.
REPLY_OPEN = '{\n  "items": [\n    '
ANSWER_GAP = ",\n    "
REPLY_CLOSE = "\n  ]\n}"


def prompt_chars(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
    """Characters of a request's prompt: its messages and the tools the template renders into it."""
    size = sum(len(str(m.get("content") or "")) for m in messages)
    return size + (len(json.dumps(tools, ensure_ascii=False)) if tools else 0)


def redact_reply(reply: ChatReply, secret: str | None) -> ChatReply:
    """`reply` with the API key (and bearer tokens, sk- keys) removed from everything it says,
    also where JSON escapes spell the key differently."""
    content = None if reply.content is None else redact_text(reply.content, secret)
    refusal = None if reply.refusal is None else redact_text(reply.refusal, secret)
    calls = tuple(
        {k: redact_text(v, secret) if isinstance(v, str) else v for k, v in call.items()}
        for call in reply.tool_calls
    )
    return replace(reply, content=content, refusal=refusal, tool_calls=calls)


def redact_text(text: str, secret: str | None) -> str:
    """`scrub` on the text and, when it is JSON, on every string inside it (escapes decoded)."""
    text = scrub(text, secret)
    if not secret or "\\" not in text:
        return text
    try:
        data = json.loads(text)
    except ValueError:
        return text
    cleaned = _scrub_strings(data, secret)
    return text if cleaned == data else json.dumps(cleaned, ensure_ascii=False)


def _scrub_strings(value: Any, secret: str) -> Any:
    if isinstance(value, str):
        return scrub(value, secret)
    if isinstance(value, list):
        return [_scrub_strings(v, secret) for v in value]
    if isinstance(value, dict):
        return {scrub(str(k), secret): _scrub_strings(v, secret) for k, v in value.items()}
    return value


def looks_like_tool_call(text: str | None) -> bool:
    """Whether reply text holds a tool call written out (a `<tool_call>` tag, or JSON naming a
    function with its arguments) instead of a real one: not an answer, but a malformed call."""
    if not text:
        return False
    return bool(_TOOL_CALL_TAG.search(text) or _CALL_JSON.search(text))


def tool_step_text(reply: ChatReply) -> str:
    """A tool-calling reply as one canonical JSON text: what is parsed, cached and reported."""
    return json.dumps(
        {"content": reply.content, "tool_calls": list(reply.tool_calls)}, ensure_ascii=False, sort_keys=True
    )


def parse_tool_step(text: str) -> ToolStep:
    """The ToolStep in `tool_step_text` output; a reply with neither text nor tool calls is invalid."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("a tool step must be a JSON object")
    content = data.get("content") if isinstance(data.get("content"), str) else ""
    step = ToolStep.model_validate(
        {"content": strip_thinking(content) or None, "tool_calls": data.get("tool_calls") or []}
    )
    if step.content is None and not step.tool_calls:
        raise ValueError("the reply has neither content nor tool calls")
    if not step.tool_calls and looks_like_tool_call(step.content):
        # Asked again (the client re-asks once): taken as text it would read as "no call needed".
        raise ValueError(
            "the reply wrote a tool call as text instead of calling the tool; call it through the "
            "tools interface"
        )
    return step


def error_summary(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()[:5]]
        more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        return f"{exc.error_count()} validation error(s): " + "; ".join(parts) + more
    return str(exc)


CLIPPABLE = ("string_too_long", "too_long")  # a string or a list over its bound


def clip_overlong(content: str, exc: ValidationError) -> str | None:
    """`content` with every string and list the response model found too long cut to its limit,
    when that is all that was wrong; else None. The schema sent to the server carries no string
    `maxLength` (tasks.llm.client.portable), so a model cannot know that limit, and a list cap
    (`[extract_graph] max_items`) is a budget a server without a grammar may not hold: cutting keeps
    the first items instead of losing the reply."""
    errors = exc.errors()
    if not errors or any(e.get("type") not in CLIPPABLE for e in errors):
        return None
    try:
        data = json.loads(content)
    except ValueError:
        return None
    for error in errors:
        *path, last = error["loc"]
        holder = data
        try:
            for step in path:
                holder = holder[step]
            holder[last] = holder[last][: int(error["ctx"]["max_length"])]
        except (KeyError, IndexError, TypeError, ValueError):
            return None
    return json.dumps(data, ensure_ascii=False)


def parsed_or_none(parse: Any, content: str) -> Any:
    """`parse(content)`, or None when it still does not validate."""
    try:
        return parse(content)
    except (ValidationError, ValueError):
        return None
