"""A reply whose only fault is a string over a limit the sent schema could not state, or a list over its
cap, is cut, not lost."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field, ValidationError

from tasks.llm.client.replies import clip_overlong


class State(BaseModel):
    evidence: str = Field(max_length=10)
    kind: str


class States(BaseModel):
    items: list[State]


class Capped(BaseModel):
    items: list[State] = Field(max_length=2)


def _error(content: str) -> ValidationError:
    with pytest.raises(ValidationError) as raised:
        States.model_validate_json(content)
    return raised.value


def test_overlong_strings_are_cut_to_their_limit():
    content = json.dumps({"items": [{"evidence": "x" * 30, "kind": "a"}, {"evidence": "short", "kind": "b"}]})
    clipped = clip_overlong(content, _error(content))
    parsed = States.model_validate_json(clipped)
    assert parsed.items[0].evidence == "x" * 10 and parsed.items[1].evidence == "short"


def test_a_list_over_its_cap_keeps_its_first_items():
    content = json.dumps({"items": [{"evidence": str(n), "kind": "a"} for n in range(5)]})
    with pytest.raises(ValidationError) as raised:
        Capped.model_validate_json(content)
    clipped = clip_overlong(content, raised.value)
    assert [item.evidence for item in Capped.model_validate_json(clipped).items] == ["0", "1"]


def test_any_other_fault_is_not_repaired():
    content = json.dumps({"items": [{"evidence": "x" * 30}]})  # "kind" missing as well
    assert clip_overlong(content, _error(content)) is None
