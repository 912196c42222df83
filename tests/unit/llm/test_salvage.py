"""A reply cut at its token limit keeps the list items the model finished, without repeats."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from schemas.responses.combined import CombinedExtraction
from tasks.llm.client.salvage import (
    closed_after_whitespace_loop,
    last_complete_item_prefix,
    salvage_cut_reply,
)


class Pair(BaseModel):
    source: str
    target: str


class Reply(BaseModel):
    names: list[str] = Field(max_length=10)
    pairs: list[Pair]


def test_the_prefix_ends_after_the_last_whole_item_of_a_top_level_list() -> None:
    cut = '{"names": ["Ann", "Bo"], "pairs": [{"source": "Ann", "target": "Bo"}, {"source": "Bo", "tar'
    assert json.loads(last_complete_item_prefix(cut)) == {
        "names": ["Ann", "Bo"],
        "pairs": [{"source": "Ann", "target": "Bo"}],
    }
    # cut inside the first list: its whole items stay, the second list is never reached
    assert json.loads(last_complete_item_prefix('{"names": ["Ann", "B')) == {"names": ["Ann"]}
    # quotes, brackets and escapes inside strings are text
    tricky = '{"names": ["a \\"[x]\\" {", "b"], "pairs": [{"source": "}]", "t'
    assert json.loads(last_complete_item_prefix(tricky)) == {"names": ['a "[x]" {', "b"]}


def test_nothing_to_salvage_without_a_whole_item_or_from_a_whole_reply() -> None:
    assert last_complete_item_prefix('{"names": ["An') is None
    assert last_complete_item_prefix('{"names": []}') is None  # not cut: nothing to repair
    assert salvage_cut_reply("no json at all", Reply) is None


def test_a_looping_reply_keeps_its_items_once_and_fills_lists_it_never_reached() -> None:
    item = '{"source": "Rosa", "target": "Marco"}'
    head = '{\n  "names": ["Rosa", "Marco"],\n  "pairs": [\n    '
    looping = head + ",\n    ".join([item] * 40) + ',\n    {"sou'
    salvage = salvage_cut_reply(looping, Reply)
    assert salvage is not None and salvage.repeats == 39
    value = Reply.model_validate_json(salvage.content)
    assert value.names == ["Rosa", "Marco"] and [p.source for p in value.pairs] == ["Rosa"]
    cut_early = salvage_cut_reply('{"names": ["Rosa", "Mar', Reply)
    assert cut_early is not None and Reply.model_validate_json(cut_early.content).pairs == []


def test_the_combined_extraction_of_a_real_cut_reply_is_readable() -> None:
    # The shape Qwen2.5-Coder-0.5B wrote for the check's screenplay: entities, then a relation loop.
    relation = (
        '{"source": "Rosa", "target": "Clerk", "description": "Rosa buys a ticket from the clerk.", '
        '"keywords": ["ticket"], "strength": 7}'
    )
    entity = '{"name": "Rosa", "type": "character", "description": "A nurse.", "aliases": ["nurse"]}'
    cut = '{"entities": [' + entity + '], "relations": [' + ", ".join([relation] * 12) + ', {"source": "Ro'
    salvage = salvage_cut_reply(cut, CombinedExtraction)
    assert salvage is not None and (salvage.kept, salvage.repeats) == (2, 11)  # one entity, one relation
    value = CombinedExtraction.model_validate_json(salvage.content)
    assert len(value.entities) == 1 and len(value.relations) == 1 and value.facts == []


def test_a_whole_reply_followed_only_by_spaces_is_closed() -> None:
    # the 0.5B model's merge judgment: its reason closed, then spaces until the limit
    cut = '{\n  "items": [\n    {\n      "number": 1,\n      "decision": "merge",\n      "reason": "Same. | "'
    closed = closed_after_whitespace_loop(cut + " " * 200)
    assert json.loads(closed)["items"] == [{"number": 1, "decision": "merge", "reason": "Same. | "}]
    # braces and brackets inside strings are text, not structure
    inside = '{"names": ["A {b", "c]"]' + "\n" * 40
    assert json.loads(closed_after_whitespace_loop(inside)) == {"names": ["A {b", "c]"]}


def test_only_a_whitespace_loop_after_a_complete_value_is_closed() -> None:
    assert closed_after_whitespace_loop('{"names": ["Ann"]' + " " * 4) is None  # not a loop
    assert closed_after_whitespace_loop('{"names": ["An' + " " * 40) is None  # inside a string
    assert closed_after_whitespace_loop('{"names": ["Ann",' + " " * 40) is None  # after a comma
    assert closed_after_whitespace_loop('{"names": ' + " " * 40) is None  # a value never written
    assert closed_after_whitespace_loop('{"names": []}' + " " * 40) is None  # already whole
