"""Attack family "workspace special files": a FIFO, a folder or a link to a device put where the
workspace keeps one of its own files (a ledger record, a manifest, the writer lock, a cache entry,
a run record). No command hangs or prints a traceback: it repairs the file, or ends in one line."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.files import NotRegularFile, open_append, read_text
from tasks.tables.io import Workspace
from tests.faults.attack_kit import INGEST_ONLY, GOOD_TEXT, OTHER_TEXT, nkw_in_process


def _device() -> Path:
    """A character device of this machine that reads forever (found at test time)."""
    return Path(os.devnull).with_name("zero")


SPECIAL = {
    "fifo": lambda path: os.mkfifo(path),
    "folder": lambda path: path.mkdir(),
    "device link": lambda path: path.symlink_to(_device()),
}
PLACES = {
    "ledger record": lambda ws: next((ws.root / "manifest" / "partitions" / "chunks").glob("a.*.json")),
    "manifest": lambda ws: ws.root / "manifest" / "a.json",
    "writer lock": lambda ws: ws.root / "writer.lock",
    "partition listing": lambda ws: ws.root / "partitions.json",
}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("special")
    inputs = []
    for doc_id, text in {"a": GOOD_TEXT, "b": OTHER_TEXT}.items():
        path = root / "in" / f"{doc_id}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        inputs.append(str(path))
    ws = Workspace.at(root / "ws")
    assert main(["build", *inputs, "-w", str(ws.root), *INGEST_ONLY]) == 0
    return ws, inputs


@pytest.fixture()
def ws(base, tmp_path) -> Workspace:
    copy = Workspace.at(tmp_path / "ws")
    shutil.copytree(base[0].root, copy.root, symlinks=True)
    return copy


def _plant(ws: Workspace, place: str, kind: str) -> Path:
    path = PLACES[place](ws)
    if path.exists() or path.is_symlink():
        path.unlink()
    SPECIAL[kind](path)
    return path


@pytest.mark.parametrize("kind", list(SPECIAL))
@pytest.mark.parametrize("place", list(PLACES))
def test_readers_and_writers_never_hang_on_a_special_workspace_file(place, kind, ws, base, capsys):
    if kind == "device link" and not _device().exists():
        pytest.skip("no zero device on this machine")
    _plant(ws, place, kind)
    commands = [
        ["inspect", "-w", ws.root],
        ["sql", "SELECT count(*) AS n FROM chunks", "-w", ws.root],
        ["remove", "b", "-w", ws.root],
        ["build", base[1][0], "-w", ws.root, *INGEST_ONLY],
    ]
    for args in commands:
        result = nkw_in_process(capsys, *args, seconds=30)
        result.no_traceback()
        name = PLACES[place](ws).name
        if result.code != 0 and "failed:" in result.out:  # a build: the stage that met it failed
            assert result.code == 1 and name in result.out, result.out
        elif result.code != 0:
            result.clean_failure()
            assert name in result.err, result.err  # the file is named


@pytest.mark.parametrize("kind", list(SPECIAL))
def test_the_shared_reader_refuses_without_blocking_and_names_the_file(kind, tmp_path):
    if kind == "device link" and not _device().exists():
        pytest.skip("no zero device on this machine")
    path = tmp_path / "record.json"
    SPECIAL[kind](path)
    with pytest.raises(NotRegularFile, match="record.json"):
        read_text(path)
    if kind != "folder":
        with pytest.raises(NotRegularFile, match="record.json"):
            open_append(path)  # an answer journal: a FIFO with no reader must not block a write


def test_a_run_journal_that_is_a_fifo_is_refused_in_one_line(ws, tmp_path, capsys):
    runs = ws.root / "runs"
    runs.mkdir(exist_ok=True)
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"qid": "q1", "doc_id": "a", "question": "Who found the key?"}\n')
    from flows.evaluation.answer_journal import AnswerJournal

    os.mkfifo(runs / "r1.answers.jsonl")
    with pytest.raises(NotRegularFile, match="r1.answers.jsonl"):
        AnswerJournal(ws, "r1")


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_question_on_a_document_whose_sections_cannot_be_read_names_the_damage(
    kind, sample_workspace, tmp_path, capsys
):
    copy = tmp_path / "ws"
    shutil.copytree(sample_workspace.root, copy, symlinks=True)
    record = copy / "manifest" / "partitions" / "sections" / "the_lighthouse_key.parquet.json"
    record.unlink()
    SPECIAL[kind](record)
    question = "Where does Tom hide the brass key after Margaret gives it to him?"
    code = main(["ask", "-w", str(copy), "--doc", "the_lighthouse_key", question, "--embeddings", "hashing"])
    err = capsys.readouterr().err
    assert code == 2 and "KeyError" not in err and "Traceback" not in err
    assert [line for line in err.splitlines() if line.strip()] == [
        line for line in err.splitlines() if "is damaged" in line
    ]
