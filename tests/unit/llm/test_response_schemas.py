"""Schemas every structured-output backend accepts (no `pattern` or string `maxLength` sent;
pydantic still checks them), and the fields the model must fill written into the prompt."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, ValidationError

import schemas.responses as responses_package
from schemas.responses.batched import batch_model
from schemas.responses.combined import CombinedExtraction
from schemas.responses.narrative import FactsReply
from tasks.llm.client.fields import HEADER, describe_fields
from tasks.llm.client.http import strict_tool
from tasks.llm.client.replies import response_schema
from tasks.llm.requests.prompts import PROMPTS_DIR
from tasks.query.tools.registry import function_schemas


def _response_models() -> list[type[BaseModel]]:
    found: dict[str, type[BaseModel]] = {}
    for info in pkgutil.iter_modules(responses_package.__path__):
        module = importlib.import_module(f"schemas.responses.{info.name}")
        for name, value in vars(module).items():
            is_model = inspect.isclass(value) and issubclass(value, BaseModel)
            if is_model and value.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = value
    return [found[k] for k in sorted(found)]


def _strings(schema: Any) -> list[dict[str, Any]]:
    if isinstance(schema, list):
        return [s for item in schema for s in _strings(item)]
    if not isinstance(schema, dict):
        return []
    own = [schema] if schema.get("type") == "string" or "pattern" in schema else []
    return own + [s for value in schema.values() for s in _strings(value)]


MODELS = _response_models()


def test_every_response_model_is_found() -> None:
    assert len(MODELS) > 20 and FactsReply in MODELS


@pytest.mark.parametrize("model", MODELS + [batch_model(FactsReply)], ids=lambda m: m.__name__)
def test_the_schema_sent_has_no_pattern_and_no_string_max_length(model: type[BaseModel]) -> None:
    _, sent, _ = response_schema(model)
    strings = _strings(json.loads(sent))
    assert not [s for s in strings if "pattern" in s or "maxLength" in s]


def test_tool_parameters_are_sent_portable_and_strict() -> None:
    for tool in map(strict_tool, function_schemas()):
        assert tool["function"]["strict"] is True
        assert not [s for s in _strings(tool["function"]["parameters"]) if "pattern" in s or "maxLength" in s]


def test_pydantic_still_checks_what_the_sent_schema_leaves_out() -> None:
    # AttributeItem.key has pattern + min/maxLength: the combination xgrammar refuses.
    full = json.dumps(batch_model(FactsReply).model_json_schema())
    assert '"pattern"' in full and '"pattern"' not in response_schema(batch_model(FactsReply))[1]
    reply = {
        "facts": [],
        "attributes": [{"key": "Not Snake", "value": "v", "fact_numbers": []}],
        "summary": "s",
    }
    with pytest.raises(ValidationError, match="key"):
        FactsReply.model_validate(reply)


class Inner(BaseModel):
    """One thing found."""

    label: Literal["a", "b"]
    score: int = Field(ge=1, le=10, description="how sure")


class Outer(BaseModel):
    name: str = Field(min_length=1, max_length=40, description="the name as written")
    things: list[Inner] = Field(max_length=5)
    note: str | None = None
    flag: bool = False


def test_describe_fields_lists_names_types_requirements_and_descriptions() -> None:
    assert describe_fields(Outer.model_json_schema()).splitlines() == [
        HEADER,
        "- name: string (≤40 chars) — the name as written",
        "- things: list (≤5) of object — One thing found.",
        '  - label: one of "a", "b"',
        "  - score: integer from 1 to 10 — how sure",
        "- note: string or null, optional",
        "- flag: true or false, optional",
    ]


def test_the_fields_of_every_response_model_render() -> None:
    for model in MODELS:
        text = describe_fields(model.model_json_schema())
        assert text.startswith(HEADER)
        properties = model.model_json_schema().get("properties") or {}
        assert all(f"- {name}:" in text for name in properties)


def test_no_prompt_points_at_a_schema_the_model_cannot_see() -> None:
    said = {
        path.relative_to(PROMPTS_DIR).as_posix()
        for path in PROMPTS_DIR.rglob("*.md")
        if any(p in path.read_text(encoding="utf-8").lower() for p in ("given schema", "required schema"))
    }
    assert said == set()


def _property_orders(schema: Any) -> list[list[str]]:
    if isinstance(schema, list):
        return [order for item in schema for order in _property_orders(item)]
    if not isinstance(schema, dict):
        return []
    own = [list(schema["properties"])] if isinstance(schema.get("properties"), dict) else []
    return own + [order for value in schema.values() for order in _property_orders(value)]


@pytest.mark.parametrize("keep_lengths", [False, True])
def test_the_schema_sent_lists_properties_in_the_models_order(keep_lengths: bool) -> None:
    # A grammar-enforcing server writes an object's properties in the order the schema lists them:
    # sorted, an entity's description came before its name and the facts before the relations.
    for model in MODELS + [batch_model(FactsReply)]:
        sent = json.loads(response_schema(model, keep_lengths)[1])
        assert _property_orders(sent) == _property_orders(model.model_json_schema()), model.__name__
    combined = json.loads(response_schema(CombinedExtraction, keep_lengths)[1])
    assert list(combined["properties"]) == list(CombinedExtraction.model_fields)
    assert list(combined["$defs"]["ExtractedEntity"]["properties"])[:2] == ["name", "type"]
