"""Pydantic models of the query-time LLM: one tool-calling step of the follow-up agent, and
the final answer's structured reply (paper §3.3, appendix A.2–A.3)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from schemas.responses.base import ResponseModel

Quote = Annotated[str, Field(min_length=1, max_length=400)]


class ToolCallRequest(BaseModel):
    """One function call the model asked for; `arguments` is the model's raw JSON text, validated
    later by `tasks.query.tools.registry.call_tool` so that bad arguments become trace errors."""

    id: str
    name: str = Field(min_length=1)
    arguments: str


class ToolStep(BaseModel):
    """A chat reply to a request with `tools`: free text, tool calls, or both (never neither)."""

    content: str | None = None
    tool_calls: list[ToolCallRequest] = Field(default_factory=list)


class FinalAnswerReply(ResponseModel):
    """The finalizer's answer, with the passages it rests on and verbatim quotes from them."""

    answer: str = Field(min_length=1, max_length=2000, description="the answer, in the question's language")
    chosen_option: int | None = Field(
        description="0-based index of the chosen option (A = 0); null without options"
    )
    cited_ordinals: list[int] = Field(max_length=8, description="section numbers [n] of the passages used")
    quotes: list[Quote] = Field(max_length=6, description="short verbatim quotes copied from the passages")
    confidence: float = Field(ge=0, le=1)


class QueryDecomposition(ResponseModel):
    """What a question needs, read by the model before retrieval."""

    entities: list[str] = Field(
        default_factory=list,
        max_length=8,
        description="names of characters, places, objects or groups the question is about",
    )
    needs: list[Literal["order", "cause", "dialogue", "place", "state", "pair", "literal"]] = Field(
        default_factory=list, max_length=7, description="the kinds of evidence the answer needs"
    )
    answer_slot: str = Field("", max_length=200, description="what the answer must name, in a few words")
