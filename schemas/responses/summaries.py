"""Pydantic response models of text written from numbered quotes, each sentence naming the quotes it
rests on: summarize_hierarchy's summaries, and the answer to a whole-story question (answer_global).
Used for guided decoding and for validation."""

from __future__ import annotations

from pydantic import Field

from schemas.responses.base import ResponseModel


class WrittenSentence(ResponseModel):
    """One sentence of a written summary and the numbers of the quotes that support it."""

    text: str = Field(min_length=1, max_length=500)
    quotes: list[int] = Field(min_length=1, max_length=8, description="numbers of the supporting quotes")


class WrittenSummary(ResponseModel):
    """A summary written from one item's numbered quotes, in story order."""

    sentences: list[WrittenSentence] = Field(min_length=1, max_length=16)


MAX_ANSWER_SENTENCES = 24


class WrittenAnswer(ResponseModel):
    """The answer to a whole-story question written from its numbered quotes, in story order. The caps
    are the grammar's: a small model that loops stops at them (the request's word budget is smaller)."""

    sentences: list[WrittenSentence] = Field(min_length=1, max_length=MAX_ANSWER_SENTENCES)
