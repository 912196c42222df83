"""Reading model replies: reasoning blocks and code fences stripped, tool steps parsed,
validation errors summarised in one line, response schemas derived once per model."""

from __future__ import annotations

import json
import re
from functools import lru_cache

from pydantic import BaseModel, ValidationError

from schemas.responses.agent import ToolStep
from tasks.llm.http import ChatReply

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


@lru_cache(maxsize=128)
def response_schema(response_model: type[BaseModel]) -> tuple[str, str]:
    """(schema name, JSON of the schema) of a response model; JSON so the cache is hashable."""
    name = re.sub(r"[^A-Za-z0-9_-]", "_", response_model.__name__)[:64]
    return name, json.dumps(response_model.model_json_schema(), sort_keys=True)


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
    return step


def error_summary(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        parts = [f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}" for e in exc.errors()[:5]]
        more = f" (+{exc.error_count() - 5} more)" if exc.error_count() > 5 else ""
        return f"{exc.error_count()} validation error(s): " + "; ".join(parts) + more
    return str(exc)
