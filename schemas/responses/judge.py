"""The judge's replies: the correctness judge's binary label and short reason (paper appendix B.2), and
the rubric judge's scores of a long answer (coverage, faithfulness, coherence), each with its reason."""

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


RUBRIC_SCALE = (1, 5)  # worst and best score of every rubric criterion (the prompt's scales say so)


class CriterionScore(ResponseModel):
    """One criterion of the long-answer rubric: a score on the prompt's scale and why."""

    score: int = Field(
        ge=RUBRIC_SCALE[0], le=RUBRIC_SCALE[1], description="1 worst to 5 best, as the prompt's scale says"
    )
    reason: str = Field(max_length=300, description="one short sentence")


class RubricReply(ResponseModel):
    """One stochastic rubric judgment of a long answer against several reference answers. The fields
    are the criteria (tasks.evaluate.rubric.RUBRIC_CRITERIA is derived from them), so the reply's
    schema is fixed whatever the question."""

    coverage: CriterionScore = Field(description="how many of the references' main points the answer makes")
    faithfulness: CriterionScore = Field(
        description="whether the answer keeps to what the references say: nothing contradicted or invented"
    )
    coherence: CriterionScore = Field(
        description="whether the answer reads as one connected account, its events in story order"
    )
