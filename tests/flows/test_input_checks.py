"""`nkw ask` and `nkw eval` check their input before answering anything; answers are written
as they are produced; output piped into `head` ends quietly."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import flows.evaluation.evaluate as evaluation
from flows.evaluation.answer_journal import read_journal
from flows.cli.main import main
from flows.evaluation.question_checks import validate_questions
from tasks.tables.io import Workspace
from tests.conftest import REPO, SAMPLES

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"
GOOD = {
    "qid": "q1",
    "doc_id": "the_lighthouse_key",
    "question": "Who keeps the key?",
    "answer": "Tom",
    "options": ["Tom", "Margaret"],
    "gold_option": 0,
}



@pytest.fixture()
def sample_copy(sample_workspace, tmp_path) -> Workspace:
    """A private copy of the bundled samples' workspace, for tests that write answers."""
    return Workspace.at(shutil.copytree(sample_workspace.root, tmp_path / "ws"))

def _run(capsys, *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.mark.parametrize("question", ["", "   ", "?!", "…", "-- ?"])
def test_ask_refuses_questions_without_words(question, capsys, sample_workspace):
    rc, out, err = _run(
        capsys, "ask", question, "-w", str(sample_workspace.root), "--doc", "the_lighthouse_key"
    )
    assert rc == 2 and out == "" and err.startswith("error: the question")


def test_ask_on_a_workspace_without_documents_says_so(capsys, tmp_path):
    ws = Workspace.at(tmp_path / "ws")
    ws.tables_dir.mkdir(parents=True)
    rc, _, err = _run(capsys, "ask", "Who keeps the key?", "-w", str(ws.root))
    assert rc == 2 and "holds no documents" in err


def test_ask_warns_when_the_document_is_half_built(capsys, tmp_path):
    ws = str(tmp_path / "ws")
    assert (
        main(
            [
                "build",
                str(SAMPLES / "the_lighthouse_key.txt"),
                "-w",
                ws,
                "--embeddings",
                "hashing",
                "--no-prefect",
                "-q",
                "--until",
                "embed_texts",
            ]
        )
        == 0
    )
    rc, out, err = _run(capsys, "ask", "Who keeps the key?", "-w", ws, "--embeddings", "hashing")
    assert (
        rc == 0 and "warning: document 'the_lighthouse_key' is not fully built (missing: extract_graph" in err
    )


def test_every_bad_record_is_reported_before_anything_is_answered():
    records = [
        GOOD,
        {**GOOD, "qid": "q1"},
        {**GOOD, "qid": "q2", "question": None},
        {**GOOD, "qid": "q3", "gold_option": 99},
        {**GOOD, "qid": "q4", "gold_option": "zero"},
        [1, 2, 3],
        {**GOOD, "qid": "q5", "question": "?"},
        {**GOOD, "qid": "q6", "options": None, "gold_option": 1},
        {**GOOD, "qid": "q7", "gold_option": True},
        {**GOOD, "qid": "", "doc_id": None},
    ]
    lines = [json.dumps(r) for r in records] + ["{not json", ""]
    questions, problems = validate_questions(lines, "q.jsonl")
    assert [q.qid for q in questions] == ["q1"]
    expected = [
        "line 2: duplicate qid 'q1'",
        "line 3: the question must be text, not null",
        "line 4: 'gold_option' 99 is out of range for 2 options",
        "line 5: 'gold_option' must be an option index",
        "line 6: a question record is a JSON object, not list",
        "line 7: the question has no words",
        "line 8: 'gold_option' is given but there are no 'options'",
        "line 9: 'gold_option' must be",
        "line 10: 'qid' is missing or empty",
        "line 10: 'doc_id' is missing or empty",
        "line 11: not JSON",
    ]
    assert len(problems) == len(expected)
    for problem, start in zip(problems, expected):
        assert problem.startswith(f"q.jsonl {start}"), (problem, start)


def test_eval_with_a_bad_record_answers_nothing(capsys, sample_workspace, tmp_path, monkeypatch):
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join([json.dumps(GOOD), json.dumps({**GOOD, "qid": "q2", "gold_option": "zero"})]))
    asked = []
    monkeypatch.setattr(evaluation, "answer_document", lambda *a, **k: asked.append(a))
    rc, out, err = _run(
        capsys, "eval", "-w", str(sample_workspace.root), "--questions", str(path), "--no-prefect"
    )
    assert rc == 2 and asked == [] and out == ""
    assert "1 bad question record(s); nothing was answered" in err and "line 2: 'gold_option' must be" in err


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_eval_limit_must_be_positive(limit, capsys, sample_workspace):
    rc, _, err = _run(
        capsys, "eval", "-w", str(sample_workspace.root), "--questions", str(QUESTIONS), "--limit", limit
    )
    assert rc == 2 and "--limit must be at least 1" in err


def test_eval_for_documents_not_in_the_workspace_is_not_success(capsys, sample_copy, tmp_path):
    sample_workspace = sample_copy  # this run writes answers: not into the session's shared workspace
    path = tmp_path / "questions.jsonl"
    path.write_text(json.dumps({**GOOD, "doc_id": "not_here"}))
    rc, _, err = _run(
        capsys, "eval", "-w", str(sample_workspace.root), "--questions", str(path), "--no-prefect"
    )
    assert rc == 2 and "none of the questions' documents (not_here) are in workspace" in err
    path.write_text("\n".join([json.dumps(GOOD), json.dumps({**GOOD, "qid": "q2", "doc_id": "not_here"})]))
    rc, out, err = _run(
        capsys, "eval", "-w", str(sample_workspace.root), "--questions", str(path), "--no-prefect"
    )
    assert rc == 1 and "1 of 2 answer(s) not produced: documents not in the workspace: not_here" in err


def test_answers_are_journaled_as_they_are_produced(capsys, sample_copy, monkeypatch):
    sample_workspace = sample_copy  # this run writes answers: not into the session's shared workspace
    real_write = evaluation.write_table

    def failing_write(workspace, name, rows, part, stage=None):
        if name == "qa_answers":
            raise OSError("disk full")
        return real_write(workspace, name, rows, part, stage)

    monkeypatch.setattr(evaluation, "write_table", failing_write)
    rc, _, err = _run(
        capsys,
        "eval",
        "-w",
        str(sample_workspace.root),
        "--questions",
        str(QUESTIONS),
        "--limit",
        "3",
        "--no-prefect",
        "--embeddings",
        "hashing",
    )
    assert rc == 1 and "disk full" in err
    journals = sorted(
        (sample_workspace.root / "runs").glob("*.answers.jsonl"), key=lambda p: p.stat().st_mtime
    )
    rows = read_journal(journals[-1])
    assert [r["qid"] for r in rows] == ["lighthouse-1", "lighthouse-2", "lighthouse-3"]
    assert all(r["status"] == "answered" and r["answer"] for r in rows)


@pytest.mark.parametrize("command", ["inspect", "sql 'SELECT range AS n FROM range(300000)' --format csv"])
def test_output_into_head_ends_quietly(command, sample_workspace):
    """The second command writes ~2 MB, far more than a pipe holds, so the reader really goes away."""
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    line = f"{sys.executable} -m flows.cli.main {command} -w {sample_workspace.root} | head -1"
    result = subprocess.run(
        ["bash", "-o", "pipefail", "-c", line], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0 and result.stderr == "" and result.stdout.strip(), result.stderr
