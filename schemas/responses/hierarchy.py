"""Pydantic response models of the narrative-hierarchy LLM calls (episodes, episode relations,
SABER shortcut adjudication, storylines). Used for guided decoding and for validation."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from schemas.responses.base import ResponseModel
from schemas.responses.prose import Prose

REASON_CHARS = 240  # a judgment's reason in one sentence, as the continuity judge's
# What the prompts ask for, with room: "2 to 4 sentences". Every later prompt that shows an episode or a
# storyline carries its description, so a looping model's 2,000 characters were paid for five times.
DESCRIPTION_CHARS = 700
IMPACT_CHARS = 320  # "one or two sentences"


class EpisodeDescription(ResponseModel):
    """Title, summary and central goal or conflict of one assembled episode."""

    title: Prose = Field(min_length=1, max_length=120)  # "at most 12 words"
    summary: Prose = Field(min_length=1, max_length=DESCRIPTION_CHARS)
    goal: Prose = Field(
        "", max_length=REASON_CHARS, description="central goal or conflict; empty when there is none"
    )


class EpisodeRelationJudgment(ResponseModel):
    """One judgment on a candidate pair of episodes A (earlier in the text) and B."""

    relation_type: Literal["causes", "precedes", "elaborates", "contrasts", "none"]
    direction: Literal["A_to_B", "B_to_A"] = Field(description="which episode is the source of the relation")
    confidence: float = Field(ge=0.0, le=1.0)
    # One sentence: bounded, a grouped reply fits the limit its request shape declares (600 characters
    # let the 0.5B model's reply for 45 pairs run past it, and the pairs it left out were asked again).
    reason: str = Field("", max_length=REASON_CHARS)


class EpisodeRelationItem(ResponseModel):
    """One judgment on the anchor episode A and one listed later-told episode (e.g. E2)."""

    other: str = Field(description="label of the listed episode, e.g. E2")
    relation_type: Literal["causes", "precedes", "elaborates", "contrasts", "none"]
    direction: Literal["A_to_B", "B_to_A"] = Field(
        description="A_to_B when A is the source; B is the listed episode"
    )
    confidence: float = Field(ge=0.0, le=1.0)
    reason: str = Field("", max_length=600)


class EpisodeRelationBatch(ResponseModel):
    """Judgments on every candidate episode of one anchor episode, in one reply."""

    judgments: list[EpisodeRelationItem] = Field(default_factory=list, max_length=40)


class ShortcutJudgment(ResponseModel):
    """Whether a direct episode edge is covered by an indirect path already in the graph."""

    decision: Literal["redundant", "necessary", "uncertain"]
    reason: str = Field("", max_length=REASON_CHARS)


class StorylineRelationJudgment(ResponseModel):
    """A closed-set relation between the storyline described and one listed other storyline."""

    other: str = Field(description="label of the other storyline, e.g. S2")
    relation_type: Literal["enables", "blocks", "resolves", "conflicts", "parallels", "prerequisite", "none"]
    direction: Literal["this_to_other", "other_to_this"]
    confidence: float = Field(ge=0.0, le=1.0)
    reason: Prose = Field("", max_length=REASON_CHARS)


class StorylineDescription(ResponseModel):
    """Name, description, impact and key characters of one storyline, plus its relations."""

    name: str = Field(min_length=1, max_length=160)
    description: Prose = Field(min_length=1, max_length=DESCRIPTION_CHARS)
    impact: Prose = Field("", max_length=IMPACT_CHARS)
    key_characters: list[str] = Field(default_factory=list, max_length=8)
    relations: list[StorylineRelationJudgment] = Field(default_factory=list, max_length=20)
