"""A reply whose only fault is a string over a limit the sent schema could not state is cut, not lost."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel, Field, ValidationError

from tasks.llm.replies import clip_overlong_strings


class State(BaseModel):
    evidence: str = Field(max_length=10)
    kind: str


class States(BaseModel):
    items: list[State]


def _error(content: str) -> ValidationError:
    with pytest.raises(ValidationError) as raised:
        States.model_validate_json(content)
    return raised.value


def test_overlong_strings_are_cut_to_their_limit():
    content = json.dumps({"items": [{"evidence": "x" * 30, "kind": "a"}, {"evidence": "short", "kind": "b"}]})
    clipped = clip_overlong_strings(content, _error(content))
    parsed = States.model_validate_json(clipped)
    assert parsed.items[0].evidence == "x" * 10 and parsed.items[1].evidence == "short"


def test_any_other_fault_is_not_repaired():
    content = json.dumps({"items": [{"evidence": "x" * 30}]})  # "kind" missing as well
    assert clip_overlong_strings(content, _error(content)) is None
