"""Rows of the evaluation tables built from one answered (or unanswered) question: a `qa_answers`
row with its scores, and the `qa_traces` rows of its tool calls. Pure functions.
"""

from __future__ import annotations

import json
from typing import Any

from tasks.evaluate.metrics import ROUGE_METRICS, Question, best_rouges, evidence_recall
from tasks.query.answer_types import Answer


def answer_row(
    run_id: str,
    benchmark: str,
    question: Question,
    sample: int,
    answer: Answer | None,
    gold: list[str],
    status: str,
    language: str | None = None,
    gold_unmapped: list[str] | None = None,
) -> dict[str, Any]:
    """One `qa_answers` row; a question whose gold could not all be mapped gets no evidence recall."""
    gold_unmapped = list(gold_unmapped or [])
    base = {
        "run_id": run_id,
        "benchmark": benchmark,
        "qid": question.qid,
        "doc_id": question.doc_id,
        "system": answer.system if answer else "",
        "sample": sample,
        "qtype": question.qtype,
        "question": question.question,
        "reference": question.answer,
        "gold_option": question.gold_option,
        "gold_section_ids": gold,
        "status": status,
        "language": language or question.meta.get("language"),
        "gold_unmapped": gold_unmapped,
    }
    if answer is None:
        return {
            **base,
            "answer": None,
            "is_offline": None,
            "chosen_option": None,
            "is_correct_option": None,
            **dict.fromkeys(ROUGE_METRICS),
            "evidence_section_ids": [],
            "evidence_recall": None,
            "evidence_tokens": None,
            "cited_headings": [],
            "latency_ms": None,
            "board": None,
            "skills": [],
            "tool_calls": None,
        }
    is_correct = None
    if question.options and question.gold_option is not None:
        is_correct = answer.chosen_option == question.gold_option
    return {
        **base,
        "answer": answer.answer,
        "is_offline": answer.is_offline,
        "chosen_option": answer.chosen_option,
        "is_correct_option": is_correct,
        **best_rouges(answer.answer, question.references),
        "evidence_section_ids": answer.evidence_section_ids,
        "evidence_recall": None if gold_unmapped else evidence_recall(gold, answer.evidence_section_ids),
        "evidence_tokens": answer.evidence_tokens,
        "cited_headings": [c.heading for c in answer.citations],
        "latency_ms": answer.latency_ms,
        "board": dict(answer.board) if answer.board else None,
        "skills": list(answer.skills),
        "tool_calls": len(answer.trace),
    }


def trace_rows(run_id: str, qid: str, sample: int, answer: Answer) -> list[dict[str, Any]]:
    return [
        {
            "run_id": run_id,
            "qid": qid,
            "sample": sample,
            "call_index": i,
            "round": int(call.get("round", 0)),
            "tool": call["tool"],
            "arguments": json.dumps(call.get("arguments", {}), ensure_ascii=False, sort_keys=True),
            "rows": call.get("rows"),
            "tokens": call.get("tokens"),
            "ms": call.get("ms"),
            "kinds": list(call.get("kinds") or []),
        }
        for i, call in enumerate(answer.trace)
    ]
