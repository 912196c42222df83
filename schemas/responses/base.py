"""Pydantic response models of LLM calls, used both for guided decoding (their JSON schema is
sent as `response_format`) and for validating every reply.

Every model derives from `ResponseModel`, which forbids unknown fields: the JSON schema then
says `additionalProperties: false`, as strict structured output requires, and a reply with
invented keys is rejected (and re-asked) instead of silently accepted.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class ResponseModel(BaseModel):
    """Base of every LLM response model: unknown fields are an error."""

    model_config = ConfigDict(extra="forbid")


class LLMCheckReply(ResponseModel):
    """The tiny structured reply `nkw llm check` asks for to prove guided JSON works end to end."""

    ok: bool
    echo: str
