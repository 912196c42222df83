"""Configuration of query time: retrieval (`[retrieval]`), answering (`[answer]`), evaluation
(`[evaluate]`) and `nkw sql` (`[sql]`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from schemas.config_section import SIZE_PATTERN, Section, check_url


class RetrievalSettings(Section):
    top_k_chunks: int = Field(5, ge=1)
    candidates: int = Field(40, ge=1, description="candidates per retriever before fusion")
    rrf_k: int = Field(60, ge=1)
    dense_chunk_score: Literal["best_sentence", "chunk"] = Field(
        "best_sentence",
        description="dense score of a chunk: its most similar sentence's, or its own vector's",
    )
    dense_window_score: Literal["best_sentence", "window"] = Field(
        "window",
        description="dense score of a ~40-word window (the hybrid_fine baseline and NKW's budget fill): "
        "its own text's vector (embedded when a session first asks, kept in the workspace's vector "
        "store), or its most similar sentence's",
    )


class AnswerSettings(Section):
    """Query time (paper §3.3, appendix A.2–A.5); the switches are the paper's ablations."""

    follow_up_rounds: int = Field(
        2, ge=0, le=2, description="agent follow-up rounds after the forced first pass"
    )
    # A small local model adds little before the answer (the 0.5B model never asked for a follow-up)
    # and each step is another request of thousands of prompt tokens: on a laptop CPU an answer took
    # 5 requests and 1-20 minutes. 'reader' keeps the model where it pays, as the reader.
    llm_steps: Literal["agent", "reader"] = Field(
        "agent",
        description="with a model: 'agent' lets it read the question, choose skills, plan follow-ups and "
        "answer; 'reader' only answers (the rest by the offline rules: one request a question)",
    )
    max_calls_per_round: int = Field(5, ge=1, le=5)
    graph_tools: bool = Field(True, description="False removes the graph-channel tools")
    reading_skills: bool = Field(True, description="False injects no reading-skill cards")
    hierarchy: bool = Field(True, description="False hides episodes and storylines from the narrative tools")
    entity_items: int = Field(8, ge=0)
    narrative_items: int = Field(8, ge=0)
    relation_items: int = Field(16, ge=0)
    entity_floor: int = Field(5, ge=0)
    narrative_floor: int = Field(5, ge=0)
    facts_per_entity: int = Field(5, ge=0)
    source_token_budget: int = Field(
        0,
        ge=0,
        description="source tokens in the final evidence; 0 = the hybrid "
        "baseline's top-k chunk tokens for the same question (equal-budget comparison)",
    )
    max_passage_tokens: int = Field(
        50,
        ge=20,
        description="longest excerpt of one chunk in the final evidence (50 is about the 40-word windows "
        "of the hybrid_fine baseline: the budget reaches as many places as the strongest simple retriever)",
    )
    attributes: bool = Field(
        True,
        description="False hides entity attributes and the attribute part of profiles "
        "(atomic facts stay): the paper's 'w/o attributes' ablation",
    )
    work_answer_words: int = Field(
        400,
        ge=20,
        description="a whole-work question (the plot) is answered in about this many words, by NKW "
        "and the baselines alike",
    )
    aspect_answer_words: int = Field(
        200,
        ge=20,
        description="a question about a character, relationship, setting or theme across the whole "
        "story is answered in about this many words, by NKW and the baselines alike",
    )


class EvaluateSettings(Section):
    """Evaluation protocol (paper §4, appendix B.2-B.3): sampled answers and the correctness judge."""

    sample_temperature: float = Field(
        0.7, ge=0, le=2, description="answer temperature when --samples > 1 (Pass@k)"
    )
    judge_votes: int = Field(5, ge=1, le=15, description="stochastic judgments per answer, majority label")
    judge_temperature: float = Field(0.7, ge=0, le=2, description="sampling temperature of the judge")
    judge_url: str | None = Field(
        None, description="OpenAI-compatible server of the judge (default: the answerer's)"
    )
    judge_model: str | None = Field(None, description="judge model name (default: the answerer's)")

    _judge_url = field_validator("judge_url")(classmethod(lambda cls, value: check_url(value)))
    document_concurrency: int = Field(2, ge=1, le=32, description="documents answered at the same time")
    question_concurrency: int = Field(
        4,
        ge=1,
        le=64,
        description="questions of one document answered at the "
        "same time when an LLM answers (offline answering is one at a time)",
    )


class SqlSettings(Section):
    """Limits of `nkw sql` (read-only DuckDB over the workspace tables)."""

    timeout_s: float = Field(
        30.0, gt=0, le=86400, allow_inf_nan=False, description="a query running longer is interrupted"
    )
    memory_limit: str = Field("1GB", pattern=SIZE_PATTERN, description="DuckDB memory_limit")
    threads: int = Field(2, ge=1, le=64)
    max_result_mb: int = Field(128, ge=1, le=65536, description="a larger result is refused, not printed")
