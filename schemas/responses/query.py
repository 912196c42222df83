"""Pydantic response models of query-time LLM calls: the reading-skill selector and the
multiple-choice option-admission reader. Used for guided decoding and for validation.

The skill ids are a closed set so guided decoding can only produce catalog ids; a unit test
keeps `SKILL_IDS` equal to the ids of the cards in `tasks/skills/`.
"""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import Field, field_validator

from schemas.responses.base import ResponseModel

SkillId = Literal[
    "event_indexing",
    "perspective_state",
    "quest_legal_path",
    "literal_slot",
    "story_grammar",
    "causal_chain",
    "option_admission",
    "theme_implication",
]
SKILL_IDS: tuple[str, ...] = get_args(SkillId)

Verdict = Literal[
    "direct_support", "inference", "insufficient", "contradiction", "wrong_relation", "wrong_grain"
]
VERDICTS: tuple[str, ...] = get_args(Verdict)


class SkillChoice(ResponseModel):
    """One to three reading-skill cards for a question, chosen from the catalog."""

    skill_ids: list[SkillId] = Field(min_length=1, max_length=3, description="catalog ids, most useful first")
    reason: str = Field("", max_length=400)

    @field_validator("skill_ids")
    @classmethod
    def _distinct(cls, ids: list[str]) -> list[str]:
        if len(set(ids)) != len(ids):
            raise ValueError("skill ids must be distinct")
        return ids


class OptionJudgement(ResponseModel):
    """How the evidence admits the claim behind one answer option."""

    option: str = Field(description="the option letter, A for the first option")
    claim: str = Field(min_length=1, max_length=600, description="the declarative claim the option needs")
    verdict: Verdict
    evidence_ids: list[str] = Field(
        default_factory=list, max_length=16, description="ids of the snippets relied on"
    )
    reason: str = Field("", max_length=600)

    @field_validator("option")
    @classmethod
    def _letter(cls, value: str) -> str:
        letter = value.strip().strip("().:").upper()
        if len(letter) != 1 or not "A" <= letter <= "Z":
            raise ValueError("option must be a single letter such as 'A'")
        return letter


class OptionAdmissionReply(ResponseModel):
    """One judgement per answer option, in any order."""

    options: list[OptionJudgement] = Field(min_length=1, max_length=26)

    @field_validator("options")
    @classmethod
    def _one_per_letter(cls, judgements: list[OptionJudgement]) -> list[OptionJudgement]:
        letters = [j.option for j in judgements]
        if len(set(letters)) != len(letters):
            raise ValueError("each option letter may be judged only once")
        return judgements
