"""The correctness judge's reply (paper appendix B.2): one binary label and a short reason."""

from __future__ import annotations

from pydantic import Field

from schemas.responses.base import ResponseModel


class JudgeReply(ResponseModel):
    """One stochastic judgment of a (question, answer, reference) triple."""

    is_correct: bool = Field(
        description="true when the answer keeps the reference's key facts, with no contradiction "
        "or invention; partly right is false"
    )
    reason: str = Field(max_length=600, description="one short sentence")
