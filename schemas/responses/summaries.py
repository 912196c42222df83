"""Pydantic response models of text written from numbered quotes, each sentence naming the quotes it
rests on: summarize_hierarchy's summaries, and the answer to a whole-story question (answer_global).
Used for guided decoding and for validation."""

from __future__ import annotations

from pydantic import Field, field_validator

from schemas.responses.base import ResponseModel
from schemas.responses.prose import Prose, prose_key


class WrittenSentence(ResponseModel):
    """One sentence of a written summary and the numbers of the quotes that support it."""

    text: Prose = Field(min_length=1, max_length=500)
    quotes: list[int] = Field(min_length=1, max_length=8, description="numbers of the supporting quotes")


class WrittenSummary(ResponseModel):
    """A summary written from one item's numbered quotes, in story order."""

    sentences: list[WrittenSentence] = Field(min_length=1, max_length=16)

    @field_validator("sentences")
    @classmethod
    def _first_telling_only(cls, sentences: list[WrittenSentence]) -> list[WrittenSentence]:
        return first_tellings(sentences)


MAX_ANSWER_SENTENCES = 24


class WrittenAnswer(ResponseModel):
    """The answer to a whole-story question written from its numbered quotes, in story order. The caps
    are the grammar's: a small model that loops stops at them (the request's word budget is smaller)."""

    sentences: list[WrittenSentence] = Field(min_length=1, max_length=MAX_ANSWER_SENTENCES)


def first_tellings(sentences: list[WrittenSentence]) -> list[WrittenSentence]:
    """The sentences without those a looping model wrote again word for word (the first is kept).
    A whole-story answer keeps its repeats here: its writer drops them itself, and counts them."""
    seen: set[str] = set()
    kept = []
    for sentence in sentences:
        key = prose_key(sentence.text)
        if key not in seen:
            seen.add(key)
            kept.append(sentence)
    return kept
