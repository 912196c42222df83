"""The Hybrid RAG baseline with an LLM (paper §4 baselines): the same answer model and the same
final-answer prompt (final_answer/v2) as NKW, reading only the baseline's top-k chunks. NKW's source
budget is the token count of these same chunks, so both systems answer at one evidence budget.

An unusable or failed reply falls back to the offline extractive baseline answer, labelled offline.
"""

from __future__ import annotations

import time
from typing import Any, Callable

import numpy as np

from schemas.config import RetrievalSettings
from tasks.query.agent_loop import RequestFactory
from tasks.query.answer_types import Answer, Citation, EvidenceText
from tasks.query.evidence.board import EvidenceBoard, Passage
from tasks.query.extractive import EmbedFn
from tasks.query.hybrid.answer import answer_hybrid, evidence_from_chunks, quote
from tasks.query.hybrid.retrieve import hybrid_top_chunks
from tasks.query.question_form import read_question
from tasks.query.reader.checks import confirm_option, rotated, screen_own_answer
from tasks.query.reader.llm import check_reply, final_values, passages_text
from tasks.query.reader.shape import READER_PROMPT, as_final_reply, reader_request
from tasks.query.store.doc_index import DocumentIndex


def chunk_board(index: DocumentIndex, positions: list[tuple[int, float]]) -> EvidenceBoard:
    """An evidence board holding only whole source chunks (no structured notes)."""
    sections = index.sections.set_index("section_id")
    passages = []
    for position, score in positions:
        chunk = index.chunks.iloc[position]
        section = sections.loc[chunk["section_id"]]
        passages.append(
            Passage(
                chunk["chunk_id"],
                chunk["section_id"],
                str(section["heading"]),
                int(section["ordinal"]),
                str(chunk["text"]),
                int(chunk["n_tokens"]),
                int(chunk.get("char_start", 0) or 0),
                int(chunk.get("char_end", 0) or 0),
                float(score),
            )
        )
    return EvidenceBoard([], [], [], passages, sum(p.n_tokens for p in passages))


def answer_hybrid_llm(
    index: DocumentIndex,
    question: str,
    options: list[str] | None,
    query_vector: np.ndarray | None,
    embed: EmbedFn | None,
    settings: RetrievalSettings,
    client: Any,
    request_factory: RequestFactory,
) -> Answer:
    """The baseline's top-k chunks, answered by the LLM with the final-answer prompt."""
    started = time.perf_counter()
    ranked = hybrid_top_chunks(index, question, query_vector, settings)
    positions = [(r.position, r.score) for r in ranked]
    return answer_board_llm(
        index,
        question,
        options,
        chunk_board(index, positions),
        evidence_from_chunks(index, positions),
        "hybrid",
        lambda: answer_hybrid(index, question, options, query_vector, embed, settings),
        client,
        request_factory,
        {
            "round": 0,
            "tool": "hybrid_evidence_search",
            "kinds": ["chunk"],
            "arguments": {"query": question, "top_k": settings.top_k_chunks},
            "rows": len(positions),
        },
        started,
    )


def answer_board_llm(
    index: DocumentIndex,
    question: str,
    options: list[str] | None,
    board: EvidenceBoard,
    evidence: list[EvidenceText],
    system: str,
    fallback: Callable[[], Answer],
    client: Any,
    request_factory: RequestFactory,
    trace: dict[str, Any],
    started: float,
) -> Answer:
    """A baseline's passages answered by the LLM with the final-answer prompt; `fallback` gives
    the offline answer when the call fails or the reply is unusable."""
    # Shaped as NKW's reader is (tasks.query.reader.shape): the baseline's own offline answer is the
    # candidate offered, its option pick is shown, and the answer's length follows the question.
    offline = fallback()
    candidates = [offline.answer] if not options and offline.answer.strip() else []
    values, reply_model = reader_request(
        final_values(question, options, board, "", index.language),
        options,
        candidates,
        offline.chosen_option,
        read_question(question, options),
        index.language,
    )
    request = request_factory(READER_PROMPT, values, f"{system}_final")
    result = client.structured(request, reply_model)
    final, problem, kept = None, f"llm {result.status}: {result.error}", ""
    if result.value is not None:
        reply, taken = as_final_reply(result.value, candidates)
        if taken is None:
            verdict = screen_own_answer(reply.answer, question, candidates, passages_text(board))
            if verdict.action == "refuse":
                kept = f"its own answer did not stand: {verdict.note}"
            elif verdict.action == "candidate":
                reply = reply.model_copy(update={"answer": candidates[verdict.number - 1]})
        if not kept:
            final, problem = check_reply(reply, options, board)
    if final is not None and options and final.chosen_option is not None:

        def ask_rotated(offline_position: int | None) -> int | None:
            moved = rotated(options)
            moved_values, moved_model = reader_request(
                final_values(question, moved, board, "", index.language),
                moved,
                [],
                offline_position,
                read_question(question, options),
                index.language,
            )
            again = client.structured(
                request_factory(READER_PROMPT, moved_values, f"{system}_final_rotated"), moved_model
            )
            return None if again.value is None else as_final_reply(again.value, [])[0].chosen_option

        option = confirm_option(final.chosen_option, offline.chosen_option, len(options), ask_rotated)
        if option.confirmed:
            final.notes = [*(final.notes or []), option.note] if option.note else final.notes
        else:
            final, kept = None, option.note
    if final is None:
        answer = offline
        answer.notes.insert(
            0,
            f"LLM answer not kept ({kept}): offline extractive baseline answer"
            if kept
            else f"LLM answer failed ({problem}): offline extractive baseline answer",
        )
        # A failed call is already a failures row of the recording client; an unusable reply is not,
        # and a reply overruled by a check is no failure.
        answer.failures = (
            []
            if result.value is None or kept
            else [
                {
                    "doc_id": index.doc_id,
                    "stage": request.stage,
                    "item_id": request.item_id,
                    "error": f"llm invalid answer: {problem}",
                    "payload": "{}",
                }
            ]
        )
        answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
        return answer
    headings = {p.section_id: (p.heading, p.ordinal) for p in board.passages}
    citations = [
        Citation(section_id, *headings.get(section_id, ("", 0)), text)
        for section_id, text in final.quotes or []
    ]
    for passage in board.passages:
        if len(citations) >= 3:
            break
        if passage.section_id not in {c.section_id for c in citations}:
            citations.append(
                Citation(passage.section_id, passage.heading, passage.ordinal, quote(passage.text, 20))
            )
    answer = Answer(
        doc_id=index.doc_id,
        question=question,
        system=system,
        answer=final.text,
        is_offline=False,
        options=options,
        chosen_option=final.chosen_option,
        citations=citations[:3],
        evidence=evidence,
        notes=list(final.notes or []),
        board=board.composition(),
    )
    answer.trace.append({**trace, "ms": round((time.perf_counter() - started) * 1000, 2)})
    return answer
