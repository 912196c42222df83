"""Attack family "inputs": whatever a careless operator or an attacker feeds a build (or `ask` and
`eval` as questions), it ends in a failures row for that input alone (or a one-line refusal),
the other documents build in full, and nothing hangs. Tiny inputs, ingest stages only."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from schemas.ids import safe_doc_id
from tasks.tables.io import Workspace
from tests.faults.attack_kit import (
    FAST,
    GOOD_TEXT,
    INGEST_ONLY,
    doc_ids,
    failures,
    nkw_in_process,
    write_good_inputs,
)

SMALL = "[build]\nmax_document_chars = 2000\n"  # so "too large" costs kilobytes, not gigabytes
JSONL_GOOD = json.dumps({"doc_id": "tail", "text": GOOD_TEXT})


def _sparse(path: Path, size: int = 64 << 30, head: bytes = b"") -> Path:
    with open(path, "wb") as out:  # holes: no disk used, `size` bytes of zeros when read
        out.write(head)
        out.truncate(size)
    return path


def _fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def _device(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


# name -> (how to make it, a phrase of its failure). Each is built beside a good document.
REFUSED = {
    "empty.txt": (lambda p: p.write_bytes(b""), "empty document"),
    "blank.txt": (lambda p: p.write_bytes(b" \n\t\r\n  \n"), "empty document"),
    "binary.txt": (lambda p: p.write_bytes(bytes(range(256)) * 16), "binary"),
    "undecodable.txt": (lambda p: p.write_bytes(b"plain \x81 then \x9d " * 50), "no fallback encoding"),
    "too_large.txt": (lambda p: p.write_text("word " * 2000), "document too large"),
    "fifo.jsonl": (_fifo, "not a regular file (a FIFO)"),
    "device.jsonl": (_device, "not a regular file (a device)"),
    "sparse.jsonl": (_sparse, "longer than"),
    "nested.jsonl": (lambda p: p.write_text("[" * 50_000 + "\n" + JSONL_GOOD + "\n"), "nested too deeply"),
    "bigint.jsonl": (
        lambda p: p.write_text('{"text": "x", "n": ' + "9" * 5001 + "}\n" + JSONL_GOOD + "\n"),
        "invalid JSON on line 1",
    ),
    "not_object.jsonl": (lambda p: p.write_text('[1, 2]\n"text"\nnull\n' + JSONL_GOOD + "\n"), "no 'text'"),
    "long_line.jsonl": (
        lambda p: p.write_text(json.dumps({"text": "w " * 60_000}) + "\n" + JSONL_GOOD + "\n"),
        "line 1 is longer than",
    ),
    "nul_byte.jsonl": (
        lambda p: p.write_bytes(b'{"doc_id": "nul", "text": "a\x00b"}\n' + JSONL_GOOD.encode() + b"\n"),
        "invalid JSON on line 1",
    ),
    "line_then_hole.jsonl": (
        lambda p: _sparse(p, 64 << 30, JSONL_GOOD.encode() + b"\n"),
        "line 2 is longer than",
    ),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_bad_input_is_one_failures_row_and_the_others_build(name, tmp_path, capsys):
    make, phrase = REFUSED[name]
    good = write_good_inputs(tmp_path / "in")
    bad = tmp_path / "in" / name
    make(bad)
    (tmp_path / "small.toml").write_text(SMALL)
    ws = Workspace.at(tmp_path / "ws")
    config = ["--config", tmp_path / "small.toml"]
    result = nkw_in_process(capsys, "build", bad, *good, "-w", ws.root, *config, *INGEST_ONLY, seconds=30)
    result.no_traceback()
    assert result.code == 1, (result.out, result.err)  # an input was lost: never a success
    lost = failures(ws)
    assert any(phrase in row for row in lost), lost
    built = doc_ids(ws)
    assert {"good", "other"} <= set(built)
    assert doc_ids(ws, "chunks") == built  # every document that was read went on to the next stages
    if name.endswith(".jsonl") and JSONL_GOOD.encode() in _head(bad):
        assert "tail" in built  # the lines after the bad one are not lost


def _head(path: Path) -> bytes:
    if not path.is_file() or path.stat().st_size > 1 << 20:
        return b"" if not path.is_file() else open(path, "rb").read(4096)
    return path.read_bytes()


def _records(*texts: str) -> list[dict]:
    return [{"doc_id": f"d{i}", "text": f"{text} {GOOD_TEXT}"} for i, text in enumerate(texts)]


def _jsonl(records: list[dict], newline: str = "\n") -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + newline for r in records)


# name -> (bytes, the doc ids it holds). Odd but valid: every document builds, with no failures.
ACCEPTED = {
    "bom.txt": (b"\xef\xbb\xbf" + GOOD_TEXT.encode(), ["bom"]),
    "utf16.txt": (GOOD_TEXT.encode("utf-16"), ["utf16"]),
    "crlf.txt": (GOOD_TEXT.replace("\n", "\r\n").encode(), ["crlf"]),
    "cp1252.txt": (("Café crème. " + GOOD_TEXT).encode("cp1252"), ["cp1252"]),
    "gb18030.txt": ("玛拉在黎明时走到旧磨坊。她在石头下找到了铜钥匙。\n".encode("gb18030"), ["gb18030"]),
    "name with spaces & ünïcode.txt": (GOOD_TEXT.encode(), [safe_doc_id("name with spaces & ünïcode")]),
    "-dash.txt": (GOOD_TEXT.encode(), [safe_doc_id("-dash")]),
    "new\nline.txt": (GOOD_TEXT.encode(), [safe_doc_id("new\nline")]),
    "u2028_utf16.jsonl": (
        _jsonl(_records("One line\u2028two lines.", "Para\u2029graph.")).encode("utf-16"), ["d0", "d1"]
    ),
    "u2028_utf8.jsonl": (
        _jsonl(_records("Form\ffeed and line\u2028separator.", "Next.\x85")).encode(), ["d0", "d1"]
    ),
    "crlf.jsonl": (_jsonl(_records("A.", "B."), "\r\n").encode(), ["d0", "d1"]),
    "bom.jsonl": (b"\xef\xbb\xbf" + _jsonl(_records("A.", "B.")).encode(), ["d0", "d1"]),
    "mixed.jsonl": (
        _jsonl(_records("Plain.")).encode() + _jsonl(_records("", "Café."))[len(_jsonl(_records(""))):]
        .encode("cp1252"),
        ["d0", "d1"],
    ),
    "odd_fields.jsonl": (
        json.dumps({"doc_id": {"x": 1}, "title": ["t"], "meta": "m", "source": {"s": 1}, "language": 5,
                    "kind": [], "text": GOOD_TEXT}).encode() + b"\n",
        ["odd_fields-1"],
    ),
    "blank_lines.jsonl": (("\n\n" + _jsonl(_records("A.")) + "\n \n").encode(), ["d0"]),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_an_odd_but_valid_input_builds_in_full(name, tmp_path, capsys):
    data, expected = ACCEPTED[name]
    folder = tmp_path / "in"
    folder.mkdir()
    path = folder / name
    path.write_bytes(data)
    ws = Workspace.at(tmp_path / "ws")
    result = nkw_in_process(capsys, "build", path, "-w", ws.root, *INGEST_ONLY, seconds=30)
    result.no_traceback()
    assert result.code == 0, (result.out, result.err)
    assert failures(ws) == []
    assert doc_ids(ws) == sorted(expected) and doc_ids(ws, "chunks") == sorted(expected)


def test_a_document_id_that_climbs_out_stays_inside(tmp_path, capsys):
    source = tmp_path / "in" / "docs.jsonl"
    source.parent.mkdir()
    ids = ["../../outside", "/etc/passwd", "a/../../b", "..", "con", "x" * 300]
    source.write_text(_jsonl([{"doc_id": i, "text": GOOD_TEXT} for i in ids]))
    before = sorted(p.name for p in tmp_path.iterdir())
    ws = Workspace.at(tmp_path / "ws")
    result = nkw_in_process(capsys, "build", source, "-w", ws.root, *INGEST_ONLY)
    result.no_traceback()
    assert result.code == 0 and len(doc_ids(ws)) == len(ids)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(before + ["ws"])
    assert all(p.resolve().is_relative_to(ws.root) for p in ws.root.rglob("*"))


def test_a_workspace_inside_its_input_folder_is_not_read_as_input(tmp_path, capsys):
    folder = tmp_path / "corpus"
    write_good_inputs(folder)
    ws = Workspace.at(folder / "ws")
    assert nkw_in_process(capsys, "build", folder, "-w", ws.root, *INGEST_ONLY).code == 0
    # What an evaluation run leaves in the workspace: a JSONL log of its answers.
    (ws.root / "runs").mkdir()
    (ws.root / "runs" / "run_1.answers.jsonl").write_text(_jsonl(_records("Logged answer.")))
    (ws.root / "cache" / "notes.txt").parent.mkdir(exist_ok=True)
    (ws.root / "cache" / "notes.txt").write_text(GOOD_TEXT)
    again = nkw_in_process(capsys, "build", folder, "-w", ws.root, *INGEST_ONLY)
    assert again.code == 0, again.out
    assert doc_ids(ws) == ["good", "other"] and failures(ws) == []
    # The workspace as its own input folder: the same.
    (ws.root / "story.txt").write_text(GOOD_TEXT)
    own = nkw_in_process(capsys, "build", ws.root, "-w", ws.root, *INGEST_ONLY)
    assert own.code == 0, own.out
    assert "run_1" not in " ".join(doc_ids(ws)) and "story" in doc_ids(ws)


def test_a_folder_without_text_files_and_a_missing_path_are_refused(tmp_path, capsys):
    (tmp_path / "pics").mkdir()
    (tmp_path / "pics" / "a.png").write_bytes(b"\x89PNG")
    ws = tmp_path / "ws"
    empty = nkw_in_process(capsys, "build", tmp_path / "pics", "-w", ws, *INGEST_ONLY)
    empty.no_traceback()
    assert empty.code != 0 and "folder has no text files" in empty.out + empty.err
    nkw_in_process(capsys, "build", tmp_path / "nowhere.txt", "-w", ws, *INGEST_ONLY).clean_failure()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One tiny workspace, built in full, for the questions attacks."""
    root = tmp_path_factory.mktemp("questions")
    good = root / "in" / "good.txt"
    good.parent.mkdir()
    good.write_text(GOOD_TEXT)
    ws = Workspace.at(root / "ws")
    from flows.cli.main import main

    assert main(["build", str(good), "-w", str(ws.root), *FAST]) == 0
    return ws


QUESTION_HEAD = '{"qid": 1, "doc_id": "good", "question": "Who?", "n": '
BAD_QUESTIONS = {
    "fifo": _fifo,
    "device": _device,
    "sparse": lambda p: _sparse(p, 64 << 30),
    "empty": lambda p: p.write_bytes(b""),
    "binary": lambda p: p.write_bytes(bytes(range(256)) * 4),
    "nested": lambda p: p.write_text("{" + '"a":[' * 50_000 + "\n"),
    "bigint": lambda p: p.write_text(QUESTION_HEAD + "1" * 5001 + "}"),
}


@pytest.mark.parametrize("command", ["ask", "eval"])
@pytest.mark.parametrize("kind", sorted(BAD_QUESTIONS))
def test_a_bad_questions_file_is_refused_in_one_line(kind, command, built, tmp_path, capsys):
    path = tmp_path / "questions.jsonl"
    BAD_QUESTIONS[kind](path)
    given = ["ask", "--questions", path] if command == "ask" else ["eval", "--questions", path]
    given += [] if command == "ask" else ["--no-prefect"]
    result = nkw_in_process(capsys, *given, "-w", built.root, "--embeddings", "hashing", seconds=20)
    # One line, or (eval) a first line and then one per bad record, as `nkw eval` reports them.
    result.clean_failure(listing=command == "eval")


def test_questions_with_a_bom_crlf_and_u2028_are_read(built, tmp_path, capsys):
    record = {"qid": "q1", "doc_id": "good", "question": "Who found\u2028the brass key?", "answer": "Mara"}
    path = tmp_path / "questions.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + (json.dumps(record, ensure_ascii=False) + "\r\n").encode())
    ws = Workspace.at(tmp_path / "ws")
    shutil.copytree(built.root, ws.root)
    result = nkw_in_process(
        capsys, "eval", "--questions", path, "-w", ws.root, "--embeddings", "hashing", "--no-prefect"
    )
    result.no_traceback()
    assert result.code == 0, result.err
    asked = nkw_in_process(capsys, "ask", "--questions", path, "-w", ws.root, "--embeddings", "hashing")
    asked.no_traceback()
    assert asked.code == 0 and "Mara" in asked.out, asked.err
