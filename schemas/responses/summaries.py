"""Pydantic response model of summarize_hierarchy's LLM call: a summary written from numbered quotes,
each sentence naming the quotes it rests on. Used for guided decoding and for validation."""

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
