"""A reply cut at its token limit keeps the list items the model finished, without repeats."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from schemas.responses.combined import CombinedExtraction
from tasks.llm.client.salvage import last_complete_item_prefix, salvage_cut_reply


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
