"""A question names its document as the documents file does, even when ingest had to change the
id to a file-safe one ("tale-of-mrs.tittlemouse": FairytaleQA's train split has two such stories)."""

from __future__ import annotations

import json

from flows.build.corpus import build
from flows.evaluation.evaluate import evaluate
from schemas.config import load_settings
from schemas.ids import safe_doc_id
from tasks.tables.io import Workspace, read_frame

STORY = (
    "Mrs. Tittlemouse was a wood mouse who lived in a bank under a hedge. "
    "She swept her passages every morning with a little broom. "
    "One day a beetle came in, and she chased him out with her dustpan."
)


def test_questions_reach_a_document_whose_id_ingest_made_file_safe(tmp_path):
    raw_id = "tale-of-mrs.tittlemouse"
    assert safe_doc_id(raw_id) != raw_id  # the case this test is about
    documents = tmp_path / "documents.jsonl"
    documents.write_text(json.dumps({"doc_id": raw_id, "title": "Mrs. Tittlemouse", "text": STORY}) + "\n")
    questions = tmp_path / "questions.jsonl"
    question = "What did Mrs. Tittlemouse sweep?"
    record = {"qid": "q1", "doc_id": raw_id, "question": question, "answer": "her passages"}
    questions.write_text(json.dumps(record) + "\n")
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    workspace = Workspace.at(tmp_path / "ws")
    assert build([str(documents)], workspace, settings, quiet=True).ok
    report = evaluate(workspace, questions, settings)
    assert report.skipped_documents == []
    answers = read_frame(workspace, "qa_answers")
    assert list(answers["status"]) == ["answered"] and list(answers["doc_id"]) == [safe_doc_id(raw_id)]
