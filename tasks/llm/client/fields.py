"""The fields a structured reply must fill, written out for the model to read.

vLLM and llama.cpp enforce `response_format` while decoding but never show it to the model:
a Qwen chat template renders only the messages. So the model would learn a field's meaning
(its description, its allowed values) only by guessing from its name. `describe_fields` renders
a response model's JSON schema as a short indented list (name, type, required or not,
description, allowed values) that the client adds to the system message of every structured
request.
"""

from __future__ import annotations

import json
from typing import Any

HEADER = "Reply with one JSON object only, with these fields (all required unless marked optional):"
MAX_DEPTH = 4  # deeper nesting is named by its type only
MAX_ENUM = 12  # longer lists of allowed values are cut with "…"


def describe_fields(schema: dict[str, Any]) -> str:
    """The fields of a JSON schema object as an indented Markdown list under `HEADER`."""
    defs = schema.get("$defs") or schema.get("definitions") or {}
    lines = [HEADER]
    _object_lines(_resolve(schema, defs), defs, 0, lines)
    return "\n".join(lines)


def _resolve(schema: Any, defs: dict[str, Any]) -> dict[str, Any]:
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 16:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        schema = {**defs.get(name, {}), **{k: v for k, v in schema.items() if k != "$ref"}}
        seen += 1
    return schema if isinstance(schema, dict) else {}


def _object_lines(schema: dict[str, Any], defs: dict[str, Any], depth: int, lines: list[str]) -> None:
    required = set(schema.get("required") or [])
    for name, sub in (schema.get("properties") or {}).items():
        sub = _resolve(sub, defs)
        kind, child = _kind(sub, defs)
        line = f"{'  ' * depth}- {name}: {kind}{'' if name in required else ', optional'}"
        description = sub.get("description") or (child or {}).get("description")
        if description:
            line += f" — {' '.join(str(description).split())}"
        lines.append(line)
        if child is not None and depth + 1 < MAX_DEPTH:
            _object_lines(child, defs, depth + 1, lines)


def _kind(schema: dict[str, Any], defs: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """A short type phrase, and the object schema whose fields follow on the next lines (if any)."""
    options = schema.get("anyOf") or schema.get("oneOf")
    if options:
        parts = [_resolve(option, defs) for option in options]
        nullable = any(part.get("type") == "null" for part in parts)
        kinds = [_kind(part, defs) for part in parts if part.get("type") != "null"]
        phrase = " or ".join(kind for kind, _ in kinds) or "null"
        child = next((c for _, c in kinds if c is not None), None)
        return (f"{phrase} or null" if nullable else phrase), child
    if "enum" in schema or "const" in schema:
        values = schema.get("enum", [schema.get("const")])
        shown = ", ".join(json.dumps(v, ensure_ascii=False) for v in values[:MAX_ENUM])
        return f"one of {shown}{', …' if len(values) > MAX_ENUM else ''}", None
    kind = schema.get("type")
    if kind == "array":
        item = _resolve(schema.get("items") or {}, defs)
        item_kind, child = _kind(item, defs)
        bounds = _bounds(schema.get("minItems"), schema.get("maxItems"))
        return f"list{bounds} of {item_kind}", child
    if kind == "object" or "properties" in schema:
        return "object", schema if schema.get("properties") else None
    if kind == "string":
        pattern = f" matching {schema['pattern']}" if schema.get("pattern") else ""
        return "string" + _bounds(schema.get("minLength"), schema.get("maxLength"), "chars") + pattern, None
    if kind in ("integer", "number"):
        return str(kind) + _range(schema), None
    if kind == "boolean":
        return "true or false", None
    return str(kind or "any value"), None


def _bounds(low: Any, high: Any, unit: str = "") -> str:
    """Length bounds in a few characters: (2-8 chars), (≤8), (≥2); a lower bound of 1 is implied."""
    unit = f" {unit}" if unit else ""
    low = low if low and low > 1 else None
    if low is not None and high is not None:
        return f" ({low}-{high}{unit})"
    if high is not None:
        return f" (≤{high}{unit})"
    if low is not None:
        return f" (≥{low}{unit})"
    return ""


def _range(schema: dict[str, Any]) -> str:
    low = schema.get("minimum", schema.get("exclusiveMinimum"))
    high = schema.get("maximum", schema.get("exclusiveMaximum"))
    if low is not None and high is not None:
        return f" from {low} to {high}"
    if low is not None:
        return f" ≥ {low}"
    if high is not None:
        return f" ≤ {high}"
    return ""
