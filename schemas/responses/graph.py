"""Response models of the graph backbone prompts (extract_graph, canonicalize_entities).

Every field is required (strict structured output); lists may be empty. The JSON schema of
each model is what vLLM's guided decoding enforces, and every reply is validated against it.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from schemas.responses.base import ResponseModel

EntityTypeName = Literal["character", "group", "location", "time", "object", "institution", "role", "concept"]


class ExtractedEntity(ResponseModel):
    """One stable story referent named in the chunk."""

    name: str = Field(min_length=1, max_length=120, description="the name as written in the text")
    type: EntityTypeName
    description: str = Field(max_length=600, description="who or what it is, from this chunk only")
    aliases: list[Annotated[str, Field(max_length=120)]] = Field(
        max_length=4, description="other names or titles used for it in this chunk"
    )


class ExtractedRelation(ResponseModel):
    """One binary relation between two entities of the chunk (n-ary facts are split into pairs)."""

    source: str = Field(min_length=1, max_length=120)
    target: str = Field(min_length=1, max_length=120)
    description: str = Field(max_length=600, description="how the two are related, from this chunk only")
    keywords: list[Annotated[str, Field(max_length=60)]] = Field(
        max_length=6, description="short topical keywords, e.g. 'argues', 'hides key'"
    )
    strength: int = Field(ge=1, le=10, description="1 weak or incidental ... 10 central and explicit")


class GraphExtraction(ResponseModel):
    """The entities and relations of one chunk."""

    entities: list[ExtractedEntity] = Field(max_length=60)
    relations: list[ExtractedRelation] = Field(max_length=80)


class MergeJudgement(ResponseModel):
    """Whether two entity records denote the same referent."""

    decision: Literal["merge", "separate"]
    reason: str = Field(min_length=1, max_length=400)
