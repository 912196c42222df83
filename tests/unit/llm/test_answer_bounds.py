"""Answers whose every list and string is capped fit the reply budget their request shape declares,
so a grammar-enforcing server cannot be cut at the limit however much a small model writes (the 0.5B
states critic, with twelve unbounded problems, was cut in 26 of 44 requests; the continuity judge
lost an item the same way)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from tasks.llm.requests.shapes import SHAPES

CHARS_PER_TOKEN = 4  # English prose in the Qwen tokenizer; quotes and keys counted on top


def token_bound(schema: dict[str, Any], defs: dict[str, Any]) -> float:
    """The most tokens a JSON value of `schema` takes (inf when a list or string is unbounded)."""
    if "$ref" in schema:
        return token_bound(defs[schema["$ref"].split("/")[-1]], defs)
    if "anyOf" in schema:
        return max(token_bound(s, defs) for s in schema["anyOf"])
    kind = schema.get("type")
    if "enum" in schema or kind in ("boolean", "number", "integer", "null"):
        return 4
    if kind == "string":
        return math.ceil(schema["maxLength"] / CHARS_PER_TOKEN) + 2 if "maxLength" in schema else math.inf
    if kind == "array":
        if "maxItems" not in schema:
            return math.inf
        return 2 + schema["maxItems"] * (token_bound(schema["items"], defs) + 1)
    if kind == "object":
        properties = schema.get("properties", {})
        return 2 + sum(
            len(name) / CHARS_PER_TOKEN + 3 + token_bound(p, defs) for name, p in properties.items()
        )
    raise AssertionError(f"unexpected schema {schema}")


@pytest.mark.parametrize(
    "name",
    ["character_states_critic", "judge_continuity", "relate_episodes", "break_cycles", "assemble_episodes"],
)
def test_a_capped_answer_fits_its_reply_budget(name: str) -> None:
    shape = SHAPES[name]
    schema = shape.answer_model.model_json_schema()
    bound = token_bound(schema, schema.get("$defs", {})) + 6  # the answer's `number` and its key
    assert bound < math.inf
    assert bound <= shape.reply_tokens_per_item, f"{name}: {bound:.0f} > {shape.reply_tokens_per_item}"


def test_the_bound_sees_an_answer_larger_than_its_budget() -> None:
    schema = SHAPES["character_states"].answer_model.model_json_schema()
    assert token_bound(schema, schema.get("$defs", {})) > SHAPES["character_states"].reply_tokens_per_item
