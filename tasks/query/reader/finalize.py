"""What a finalizer returns, and its signature: shared by the query pipeline and both finalizers
(offline and LLM), so neither imports the pipeline that calls it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tasks.query.answer_types import Citation
from tasks.query.evidence.board import EvidenceBoard
from tasks.query.plan import QueryIntents
from tasks.query.tools.env import ToolEnv


@dataclass
class FinalAnswer:
    text: str
    chosen_option: int | None = None
    option_scores: list[float] | None = None
    quotes: list[tuple[str, str]] | None = None  # (section id, quote)
    notes: list[str] | None = None
    is_offline: bool = True
    kind: str = (
        ""  # the short answer's type (who, where, ...), "sentence" when it fell back, "option" for MCQ
    )
    # The answer's citations when its writer made them (a written whole-story answer: one per sentence);
    # None: the pipeline cites `quotes` and the packet.
    citations: list[Citation] | None = None


Finalizer = Callable[[ToolEnv, str, list[str] | None, QueryIntents, EvidenceBoard, list[str]], FinalAnswer]
