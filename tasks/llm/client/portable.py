"""The JSON schema sent to the server: one every structured-output backend accepts and compiles fast.

vLLM's xgrammar refuses a string with `pattern` together with `minLength`/`maxLength` (HTTP
400), and long string `maxLength`s make its first compile of a schema take tens of seconds;
llguidance (llama.cpp, vLLM's fallback) takes both. So the schema sent keeps the structure
(types, required fields, enums, array bounds, `minLength`) and drops `pattern` and string
`maxLength`; the response model still checks them, in pydantic, after the reply, and a reply
that breaks them is asked again like any other invalid reply.
"""

from __future__ import annotations

from typing import Any

DROPPED_STRING_KEYS = ("pattern", "maxLength", "format")


def portable_schema(schema: Any, keep_lengths: bool = False) -> Any:
    """A copy of `schema` without the string constraints some backends refuse or compile slowly;
    `keep_lengths` keeps `maxLength` (llama.cpp's own converter takes it, and it stops a small model
    writing one reason until its token limit)."""
    if isinstance(schema, list):
        return [portable_schema(item, keep_lengths) for item in schema]
    if not isinstance(schema, dict):
        return schema
    is_string = schema.get("type") == "string" or "pattern" in schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if is_string and key in DROPPED_STRING_KEYS and not (keep_lengths and key == "maxLength"):
            continue
        # Property names and enum values are data, not schemas: copy them unchanged.
        if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
            out[key] = {name: portable_schema(sub, keep_lengths) for name, sub in value.items()}
        elif key in ("enum", "const", "default", "examples", "required"):
            out[key] = value
        else:
            out[key] = portable_schema(value, keep_lengths)
    return out
