"""The fine-window baseline with an LLM: the same answer model and final-answer prompt as NKW and
the 450-word hybrid, reading the fine windows taken at the equal source-token budget. An unusable
or failed reply falls back to the offline fine-window answer, labelled offline."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from schemas.config import RetrievalSettings
from tasks.query.agent_loop import RequestFactory
from tasks.query.answer_types import Answer
from tasks.query.evidence.board import EvidenceBoard, Passage
from tasks.query.extractive import EmbedFn
from tasks.query.hybrid.answer_fine import (
    SYSTEM,
    answer_hybrid_fine,
    fine_evidence,
    hybrid_budget,
    window_evidence,
)
from tasks.query.hybrid.fine_windows import FineWindows
from tasks.query.reader.hybrid import answer_board_llm
from tasks.query.store.doc_index import DocumentIndex


def window_board(index: DocumentIndex, windows: FineWindows, taken: list[tuple[int, float]]) -> EvidenceBoard:
    """An evidence board holding only the taken windows as passages (no structured notes)."""
    starts, ends = index.sentence_spans
    passages = [
        Passage(
            item.chunk_id,
            item.section_id,
            str(item.heading),
            item.ordinal,
            item.text,
            item.n_tokens,
            int(starts[int(windows.starts[position])]),
            int(ends[int(windows.ends[position]) - 1]),
            float(score),
        )
        for item, (position, score) in zip(window_evidence(index, windows, taken), taken)
    ]
    return EvidenceBoard([], [], [], passages, sum(p.n_tokens for p in passages))


def answer_hybrid_fine_llm(
    index: DocumentIndex,
    windows: FineWindows,
    question: str,
    options: list[str] | None,
    query_vector: np.ndarray | None,
    embed: EmbedFn | None,
    settings: RetrievalSettings,
    client: Any,
    request_factory: RequestFactory,
    source_token_budget: int = 0,
) -> Answer:
    """The fine windows at the equal budget, answered by the LLM with the final-answer prompt."""
    started = time.perf_counter()
    budget = source_token_budget or hybrid_budget(index, question, query_vector, settings)
    taken = fine_evidence(index, windows, question, query_vector, budget)
    return answer_board_llm(
        index,
        question,
        options,
        window_board(index, windows, taken),
        window_evidence(index, windows, taken),
        SYSTEM,
        lambda: answer_hybrid_fine(
            index, windows, question, options, query_vector, embed, settings, source_token_budget
        ),
        client,
        request_factory,
        {
            "round": 0,
            "tool": "fine_window_search",
            "kinds": ["window"],
            "arguments": {"query": question, "budget_tokens": budget},
            "rows": len(taken),
        },
        started,
    )
