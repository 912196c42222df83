"""`--limit N` takes questions in turn from each document, so a small budget reaches every document."""

from __future__ import annotations

import json

from flows.evaluation.question_file import document_questions
from flows.evaluation.question_budget import question_budget
from schemas.ids import sha256_bytes
from tasks.evaluate.metrics import Question


def _questions(spec: dict[str, int]) -> list[Question]:
    return [
        Question(f"{doc}-{i}", doc, f"q {i}?", "a", None, None, None)
        for doc, count in spec.items()
        for i in range(count)
    ]


def test_budget_takes_questions_in_turn_from_each_document_in_file_order():
    questions = _questions({"a": 5, "b": 1, "c": 3})
    chosen = question_budget(questions, 5)
    assert [q.qid for q in chosen] == ["a-0", "a-1", "b-0", "c-0", "c-1"]
    assert [q.qid for q in question_budget(questions, 2)] == ["a-0", "b-0"]
    assert question_budget(questions, None) == questions and question_budget(questions, 50) == questions


def test_a_document_task_reads_its_share_of_the_same_budget(tmp_path):
    path = tmp_path / "questions.jsonl"
    records = [
        {"qid": q.qid, "doc_id": q.doc_id, "question": q.question, "answer": q.answer}
        for q in _questions({"a": 4, "b": 4})
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    digest = sha256_bytes(path.read_bytes())
    assert [q.qid for q in document_questions(path, digest, "b", 4)] == ["b-0", "b-1"]
    assert [q.qid for q in document_questions(path, digest, "a", 3)] == ["a-0", "a-1"]
