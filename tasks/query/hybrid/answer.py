"""The Hybrid RAG baseline: BM25 + dense chunk retrieval fused by reciprocal rank, then the
offline extractive answerer over the top-k chunks."""

from __future__ import annotations

import time

import numpy as np

from schemas.config import RetrievalSettings
from tasks.query.answer_types import Answer, Citation, EvidenceText
from tasks.query.extractive import EmbedFn, answer_extractively
from tasks.query.hybrid.retrieve import hybrid_top_chunks
from tasks.query.question_form import read_question
from tasks.query.store.doc_index import DocumentIndex

MAX_CITATIONS = 3


def quote(text: str, words: int = 30) -> str:
    parts = text.split()
    return " ".join(parts[:words]) + (" …" if len(parts) > words else "")


def citations_for(
    index: DocumentIndex, sentence_positions: list[int], evidence: list[EvidenceText]
) -> list[Citation]:
    """Sections of the quoted sentences first, then the best remaining evidence sections."""
    citations: dict[str, Citation] = {}
    sections = index.sections.set_index("section_id")
    for position in sentence_positions:
        sentence = index.sentences.iloc[position]
        section = sections.loc[sentence["section_id"]]
        citations.setdefault(
            sentence["section_id"],
            Citation(
                sentence["section_id"], section["heading"], int(section["ordinal"]), quote(sentence["text"])
            ),
        )
    for item in evidence:
        if len(citations) >= MAX_CITATIONS:
            break
        citations.setdefault(
            item.section_id, Citation(item.section_id, item.heading, item.ordinal, quote(item.text, 20))
        )
    return list(citations.values())[:MAX_CITATIONS]


def evidence_from_chunks(
    index: DocumentIndex, ranked: list[tuple[int, float]], channel: str = "text"
) -> list[EvidenceText]:
    sections = index.sections.set_index("section_id")
    items = []
    for position, score in ranked:
        chunk = index.chunks.iloc[position]
        section = sections.loc[chunk["section_id"]]
        items.append(
            EvidenceText(
                chunk["chunk_id"],
                chunk["section_id"],
                section["heading"],
                int(section["ordinal"]),
                chunk["text"],
                int(chunk["n_tokens"]),
                round(float(score), 6),
                channel,
            )
        )
    return items


def answer_hybrid(
    index: DocumentIndex,
    question: str,
    options: list[str] | None,
    query_vector: np.ndarray | None,
    embed: EmbedFn | None,
    settings: RetrievalSettings,
    answer_words: int | None = None,
) -> Answer:
    """Answer one question with the hybrid baseline (offline, extractive); with `answer_words` (a
    whole-story question) the answer is a paragraph of that length, as NKW's."""
    started = time.perf_counter()
    form = read_question(question, options)
    ranked = hybrid_top_chunks(index, question, query_vector, settings)
    evidence = evidence_from_chunks(index, [(r.position, r.score) for r in ranked])
    result = answer_extractively(
        index,
        question,
        form,
        [e.chunk_id for e in evidence],
        query_vector,
        options,
        embed,
        max_words=answer_words,
    )
    answer = Answer(
        doc_id=index.doc_id,
        question=question,
        system="hybrid",
        answer=result.text,
        is_offline=True,
        options=options,
        chosen_option=result.chosen_option,
        option_scores=result.option_scores,
        citations=citations_for(index, result.sentence_positions, evidence),
        evidence=evidence,
    )
    answer.trace.append(
        {
            "round": 0,
            "tool": "hybrid_evidence_search",
            "arguments": {"query": question, "top_k": settings.top_k_chunks},
            "rows": len(evidence),
            "ms": round((time.perf_counter() - started) * 1000, 2),
        }
    )
    return answer
