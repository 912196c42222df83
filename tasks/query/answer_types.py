"""Records of one answered question: evidence, citations, the answer and its trace."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Citation:
    section_id: str
    heading: str
    ordinal: int
    quote: str
    # A sentence the model wrote from quotes of several scenes cites them all, in story order (the
    # first is section_id); empty for a citation of one scene.
    section_ids: tuple[str, ...] = ()
    ordinals: tuple[int, ...] = ()


@dataclass(frozen=True)
class EvidenceText:
    """A source passage in the final evidence (what evidence recall and budgets count)."""

    chunk_id: str
    section_id: str
    heading: str
    ordinal: int
    text: str
    n_tokens: int
    score: float
    channel: str = "text"


@dataclass
class Answer:
    doc_id: str
    question: str
    system: str
    answer: str
    is_offline: bool
    options: list[str] | None = None
    chosen_option: int | None = None
    option_scores: list[float] | None = None
    citations: list[Citation] = field(default_factory=list)
    evidence: list[EvidenceText] = field(default_factory=list)
    latency_ms: float = 0.0
    trace: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    board: dict[str, int] = field(
        default_factory=dict
    )  # the evidence board's composition (items, passages, tokens)
    skills: list[str] = field(default_factory=list)  # reading-skill cards applied
    llm_calls: list[dict[str, Any]] = field(default_factory=list)  # llm_calls rows made for this answer
    failures: list[dict[str, Any]] = field(default_factory=list)  # failures rows (LLM items that fell back)
    answer_kind: str = ""  # short answer type (who, where, when, why, ...), "sentence" (fallback) or "option"
    intents: dict[str, Any] = field(default_factory=dict)  # the question reading, with entity ids

    @property
    def evidence_tokens(self) -> int:
        return sum(e.n_tokens for e in self.evidence)

    @property
    def evidence_section_ids(self) -> list[str]:
        """Distinct sections of the evidence, best supported first (evidence is shown in story order;
        a cut to N scenes must keep the N best, not the N earliest)."""
        ranked = sorted(self.evidence, key=lambda e: -e.score)
        return list(dict.fromkeys(e.section_id for e in ranked))

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("llm_calls")
        data["llm_call_count"] = len(self.llm_calls)
        data["evidence_tokens"] = self.evidence_tokens
        data["mode"] = "offline (no LLM: extractive answer)" if self.is_offline else "llm"
        return data
