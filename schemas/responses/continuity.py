"""LLM response models of the downstream stages (paper appendix D): the pairwise production
continuity judgment, the chain critic, and character-state extraction with its critic.
Scene references are the short labels the prompts show (S1, S2, ...), resolved by the stage."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from schemas.responses.base import ResponseModel
from schemas.tables.continuity import STATE_KINDS

StateKind = Literal[STATE_KINDS]  # type: ignore[valid-type]
# A point of evidence or a fix: one short sentence. With the lists' caps this bounds a whole answer,
# so a reply limit of the stage's tokens per item holds it however much a small model writes (the 0.5B
# critic, with twelve unbounded problems, was cut at its limit in 26 of 44 requests).
Point = Annotated[str, Field(max_length=160)]


class ContinuityJudgment(ResponseModel):
    """Can two scenes share one production setup, on the given evidence only."""

    is_continuity: bool
    confidence: float = Field(ge=0.0, le=1.0)
    support: list[Point] = Field(max_length=2, description="source-grounded evidence for a shared setup")
    blockers: list[Point] = Field(max_length=2, description="source-grounded evidence against it")
    reason: str = Field(max_length=240)


class ChainCritique(ResponseModel):
    """A holistic verdict on one preliminary continuity chain."""

    coherence_score: float = Field(ge=0.0, le=1.0)
    confidence: float = Field(ge=0.0, le=1.0)
    decision: Literal["keep", "split", "drop"]
    weak_edges: list[list[str]] = Field(max_length=20, description="pairs of scene labels with weak support")
    suggested_splits: list[list[str]] = Field(max_length=20, description="groups of scene labels")
    rationale: str = Field(max_length=800)


class StateItem(ResponseModel):
    """One observable state of one character in the scene."""

    character: str = Field(min_length=1, max_length=120)
    state: str = Field(min_length=1, max_length=200, description="what can be seen or heard, no psychology")
    kind: StateKind
    evidence: str = Field(min_length=1, max_length=400, description="an exact quote from the scene")


class StatesReply(ResponseModel):
    """Observable states of the scene's important characters."""

    states: list[StateItem] = Field(max_length=40)


class StatesCritique(ResponseModel):
    """The critic's check of extracted states: coverage, grounding, precision."""

    accept: bool
    problems: list[Point] = Field(max_length=3, description="what to fix in the next pass")
