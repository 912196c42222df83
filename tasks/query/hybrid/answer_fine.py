"""The fine-window hybrid baseline (`hybrid_fine`): BM25 + dense retrieval over ~40-word windows
fused by reciprocal rank, at the 450-word hybrid's source-token budget, then the same offline
extractive answerer. The strongest simple retriever NKW is reported beside."""

from __future__ import annotations

import time

import numpy as np

from schemas.config import RetrievalSettings
from tasks.query.answer_types import Answer, EvidenceText
from tasks.query.extractive import EmbedFn, answer_extractively
from tasks.query.hybrid.answer import citations_for
from tasks.query.hybrid.fine_windows import FineWindows, fine_search, within_budget
from tasks.query.hybrid.retrieve import hybrid_top_chunks
from tasks.query.question_form import read_question
from tasks.query.store.doc_index import DocumentIndex

SYSTEM = "hybrid_fine"


def hybrid_budget(
    index: DocumentIndex, question: str, query_vector: np.ndarray | None, settings: RetrievalSettings
) -> int:
    """Source tokens of the 450-word hybrid's top-k chunks for `question` (NKW's equal budget too)."""
    ranked = hybrid_top_chunks(index, question, query_vector, settings)
    return sum(int(index.chunks.iloc[r.position]["n_tokens"]) for r in ranked)


def fine_evidence(
    index: DocumentIndex, windows: FineWindows, question: str, query_vector: np.ndarray | None, budget: int
) -> list[tuple[int, float]]:
    """(window position, score) of the windows in the final evidence, in rank order."""
    ranked = fine_search(windows, index.sentence_vectors, question, query_vector)
    return within_budget(ranked, windows.n_tokens, budget)


def window_evidence(
    index: DocumentIndex, windows: FineWindows, taken: list[tuple[int, float]]
) -> list[EvidenceText]:
    """Evidence rows of the taken windows: each names its first sentence's chunk and its section,
    so evidence recall and budgets read it as they read a chunk."""
    sections = {row["section_id"]: row for row in index.section_rows}
    items = []
    for position, score in taken:
        section = sections[windows.section_ids[position]]
        items.append(
            EvidenceText(
                windows.chunk_ids[position],
                windows.section_ids[position],
                section["heading"],
                int(section["ordinal"]),
                windows.texts[position],
                int(windows.n_tokens[position]),
                round(float(score), 6),
                "text",
            )
        )
    return items


def sentence_ranks(windows: FineWindows, taken: list[tuple[int, float]]) -> dict[int, int]:
    """Sentence position -> rank of the taken window holding it (what the reader may quote)."""
    return {
        sentence: rank
        for rank, (position, _) in enumerate(taken)
        for sentence in range(int(windows.starts[position]), int(windows.ends[position]))
    }


def answer_hybrid_fine(
    index: DocumentIndex,
    windows: FineWindows,
    question: str,
    options: list[str] | None,
    query_vector: np.ndarray | None,
    embed: EmbedFn | None,
    settings: RetrievalSettings,
    source_token_budget: int = 0,
    answer_words: int | None = None,
) -> Answer:
    """Answer one question with the fine-window baseline (offline, extractive); the budget is
    `source_token_budget` when set, as for NKW, else the 450-word hybrid's for this question. With
    `answer_words` (a whole-story question) the answer is a paragraph of that length, as NKW's."""
    started = time.perf_counter()
    budget = source_token_budget or hybrid_budget(index, question, query_vector, settings)
    taken = fine_evidence(index, windows, question, query_vector, budget)
    evidence = window_evidence(index, windows, taken)
    result = answer_extractively(
        index,
        question,
        read_question(question, options),
        [],
        query_vector,
        options,
        embed,
        sentence_ranks=sentence_ranks(windows, taken),
        max_words=answer_words,
    )
    answer = Answer(
        doc_id=index.doc_id,
        question=question,
        system=SYSTEM,
        answer=result.text,
        is_offline=True,
        options=options,
        chosen_option=result.chosen_option,
        option_scores=result.option_scores,
        citations=citations_for(index, result.sentence_positions, evidence),
        evidence=evidence,
    )
    answer.trace.append(fine_trace(question, budget, len(evidence), started))
    return answer


def fine_trace(question: str, budget: int, rows: int, started: float) -> dict:
    """The baseline's one retrieval call as a trace row."""
    return {
        "round": 0,
        "tool": "fine_window_search",
        "arguments": {"query": question, "budget_tokens": budget},
        "rows": rows,
        "ms": round((time.perf_counter() - started) * 1000, 2),
    }
