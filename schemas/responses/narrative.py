"""LLM response models of `extract_narrative` (one reply per chunk) and `extract_facts` (one
reply per profiled entity). Names, not ids: the stages resolve names to canonical entity ids
and locate evidence quotes in the source text. Every field is required (nullable where
optional), as strict structured output wants."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from schemas.tables.narrative import EVENT_TYPES, FACT_TYPES, INTERACTION_TYPES, OCCASION_TYPES
from schemas.responses.base import ResponseModel

# A bound on every name and short cue: a grammar that carries it (llguidance) stops a model that
# repeats a word inside a string; elsewhere an overlong one is cut to it after the reply.
Name = Annotated[str, Field(max_length=120)]
Cue = Annotated[str, Field(max_length=120)]
EventType = Literal[EVENT_TYPES]  # type: ignore[valid-type]
InteractionType = Literal[INTERACTION_TYPES]  # type: ignore[valid-type]
OccasionType = Literal[OCCASION_TYPES]  # type: ignore[valid-type]
FactType = Literal[FACT_TYPES]  # type: ignore[valid-type]


class EventItem(ResponseModel):
    """Something that happens: an action, discovery, decision, arrival, departure or state change."""

    description: str = Field(min_length=1, max_length=400)
    event_type: EventType
    participants: list[Name] = Field(max_length=12)
    setting: Name | None
    time_cue: Cue | None
    evidence: str = Field(min_length=1, max_length=600, description="an exact quote from the text")


class InteractionItem(ResponseModel):
    """A directed interaction: the subject acts on or speaks to the objects."""

    subject: Name = Field(min_length=1)
    objects: list[Name] = Field(min_length=1, max_length=8)
    interaction_type: InteractionType
    description: str = Field(min_length=1, max_length=400)
    evidence: str = Field(min_length=1, max_length=600, description="an exact quote from the text")
    event_index: int | None = Field(
        ge=0, description="0-based index of the related event in `events`, or null"
    )


class OccasionItem(ResponseModel):
    """A stable situation, scene context, institutional constraint, norm or background condition."""

    description: str = Field(min_length=1, max_length=400)
    occasion_type: OccasionType
    participants: list[Name] = Field(max_length=16)
    setting: Name | None


class NarrativeReply(ResponseModel):
    """Narrative units of one chunk."""

    events: list[EventItem] = Field(max_length=60)
    interactions: list[InteractionItem] = Field(max_length=60)
    occasions: list[OccasionItem] = Field(max_length=32)  # a packed request may span several scenes


class FactItem(ResponseModel):
    """One source-grounded fact about the profiled entity."""

    text: str = Field(min_length=1, max_length=300)
    fact_type: FactType
    related: list[Name] = Field(max_length=8)
    excerpt: int = Field(ge=1, description="number of the excerpt the evidence comes from")
    evidence: str = Field(min_length=1, max_length=600, description="an exact quote from that excerpt")


class AttributeItem(ResponseModel):
    """One attribute of the entity: a snake_case key and a short value, supported by facts."""

    key: str = Field(min_length=1, max_length=48, pattern=r"^[a-z][a-z0-9_]*$")
    value: str = Field(min_length=1, max_length=200)
    fact_numbers: list[int] = Field(max_length=12, description="1-based numbers of the supporting facts")


class FactsReply(ResponseModel):
    """Atomic facts, an attribute dictionary and a short profile of one entity."""

    facts: list[FactItem] = Field(max_length=80)
    attributes: list[AttributeItem] = Field(max_length=24)
    summary: str = Field(min_length=1, max_length=1200)
