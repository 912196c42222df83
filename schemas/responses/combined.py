"""The reply to one combined extraction request (`extract_graph/v3`): the entities and relations,
the narrative units and the atomic facts of a passage (one or several consecutive chunks), in one
structured reply. Names, not ids: later stages resolve them to canonical entities."""

from __future__ import annotations

from pydantic import Field

from schemas.responses.base import ResponseModel
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
