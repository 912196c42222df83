"""The reply to one combined extraction request (`extract_graph/v4`): the entities and relations,
the narrative units, the atomic facts and the characters' visible states of a passage (one or several
consecutive chunks), in one structured reply. Names, not ids: later stages resolve them to canonical
entities."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Mapping

from pydantic import Field, create_model

from schemas.responses.base import ResponseModel
from schemas.responses.continuity import StateItem
from schemas.responses.graph import ExtractedEntity, ExtractedRelation
from schemas.responses.narrative import EventItem, FactType, InteractionItem, Name, OccasionItem


class PassageFact(ResponseModel):
    """One source-grounded fact about one named entity of the passage."""

    entity: Name = Field(min_length=1, max_length=120, description="the entity the fact is about")
    text: str = Field(min_length=1, max_length=300)
    fact_type: FactType
    related: list[Name] = Field(max_length=8)
    evidence: str = Field(min_length=1, max_length=600, description="an exact quote from the passage")


class CombinedExtraction(ResponseModel):
    """Entities, relations, narrative units and atomic facts of one passage."""

    entities: list[ExtractedEntity] = Field(max_length=120)
    relations: list[ExtractedRelation] = Field(max_length=160)
    events: list[EventItem] = Field(max_length=120)
    interactions: list[InteractionItem] = Field(max_length=120)
    occasions: list[OccasionItem] = Field(max_length=48)
    facts: list[PassageFact] = Field(max_length=160)
    # Last: a reply cut at its limit loses the states first, never the graph or the units.
    states: list[StateItem] = Field(max_length=60)


LISTS = tuple(CombinedExtraction.model_fields)
# Reply tokens one item of each list takes, pretty-printed with its strings filled: what a reply limit
# must hold for lists filled to their caps. Slightly generous: the 0.5B model's reply with 12 items
# (3/2/2/1/1/2) took 812 tokens, where these figures allow 910.
ITEM_REPLY_TOKENS = {
    "entities": 60, "relations": 70, "events": 110, "interactions": 100, "occasions": 70, "facts": 100,
    "states": 80,
}  # fmt: skip


def capped_extraction(max_items: Mapping[str, int]) -> type[CombinedExtraction]:
    """The reply model with at most `max_items[name]` items in each named list (others keep their
    bound). The caps are in the schema, so a grammar that enforces it closes a list at its cap and
    a model that writes until its limit still reaches every list."""
    unknown = sorted(set(max_items) - set(LISTS))
    if unknown:
        raise ValueError(
            f"max_items names no list of the reply: {', '.join(unknown)} (lists: {', '.join(LISTS)})"
        )
    return _capped(tuple(sorted(max_items.items())))


@lru_cache(maxsize=16)
def _capped(caps: tuple[tuple[str, int], ...]) -> type[CombinedExtraction]:
    fields: dict[str, Any] = {
        name: (CombinedExtraction.model_fields[name].annotation, Field(max_length=cap)) for name, cap in caps
    }
    # Same class name: the schema's name in response_format stays `CombinedExtraction`.
    return create_model(
        "CombinedExtraction", __base__=CombinedExtraction, __doc__=CombinedExtraction.__doc__, **fields
    )
