"""A resumed evaluation reuses a document's answers only while its tables are the ones they were
answered from: after a rebuild that changed them, the same run answers that document again."""

from __future__ import annotations

import shutil

from flows.build.corpus import build
from flows.evaluation.evaluate import evaluate
from schemas.config import load_settings
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SAMPLES, SCREENPLAY

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


def _resumed(report) -> bool:
    return any("resumed" in note for note in report.notes)


def test_a_rebuild_that_changes_the_tables_makes_stored_answers_stale(sample_workspace, tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    shutil.copytree(sample_workspace.root, workspace.root)
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})

    first = evaluate(workspace, QUESTIONS, settings, limit=3)
    again = evaluate(workspace, QUESTIONS, settings, limit=3)
    assert _resumed(again) and again.run_id == first.run_id
    assert list(again.rows["answer"]) == list(first.rows["answer"])

    chunks_before = read_frame(workspace, "chunks", "the_lighthouse_key")
    smaller = load_settings(
        overrides={"embed_texts": {"backend": "hashing"}, "split_chunks": {"chunk_tokens": 120}}
    )
    assert build([str(SCREENPLAY)], workspace, smaller, quiet=True).ok
    assert len(read_frame(workspace, "chunks", "the_lighthouse_key")) != len(chunks_before)

    after = evaluate(workspace, QUESTIONS, settings, limit=3)
    assert after.run_id == first.run_id  # same questions and answering settings: the same run
    assert not _resumed(after)  # but the document's tables changed, so it was answered again
    assert len(after.rows) == len(first.rows)
