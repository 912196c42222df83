"""Attack family "workspace damage": a workspace edited, truncated, littered or half-deleted by
hand. Every command still ends in a one-line error (non-zero) or a repair; readers never show a
damaged partition; no document loses rows because another one was damaged; a rebuild restores
exactly what a clean build holds."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flows.cli.main import main
from tasks.tables import ledger
from tasks.tables.io import Workspace
from tasks.tables.manifest import manifest_path
from tests.faults.attack_kit import FAST, GOOD_TEXT, OTHER_TEXT, doc_ids, nkw_in_process
from tests.faults.conftest import table_contents

# `a__x` and `a__extract_graph` are legal document ids that start like the partitions of `a`.
DOCS = {"a": GOOD_TEXT, "a__x": OTHER_TEXT, "a__extract_graph": "The bell rang twice. " + OTHER_TEXT,
        "b": "Ines sold bread in the square. " + GOOD_TEXT}


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("damage")
    inputs = []
    for doc_id, text in DOCS.items():
        path = root / "in" / f"{doc_id}.txt"
        path.parent.mkdir(exist_ok=True)
        path.write_text(text)
        inputs.append(str(path))
    ws = Workspace.at(root / "ws")
    assert main(["build", *inputs, "-w", str(ws.root), *FAST]) == 0
    return ws, inputs, table_contents(ws)


@pytest.fixture()
def ws(base, tmp_path) -> Workspace:
    copy = Workspace.at(tmp_path / "ws")
    shutil.copytree(base[0].root, copy.root, symlinks=True)
    return copy


def _build(capsys, ws: Workspace, base) -> object:
    return nkw_in_process(capsys, "build", *base[1], "-w", ws.root, *FAST)


def _sql_rows(capsys, ws: Workspace, table: str, doc_id: str) -> int:
    result = nkw_in_process(
        capsys, "sql", f"SELECT count(*) AS n FROM {table} WHERE doc_id = '{doc_id}'", "-w", ws.root,
        "--format", "json",
    )
    result.no_traceback()
    assert result.code == 0, result.err
    return json.loads(result.out)[0]["n"]


def _readers_survive(capsys, ws: Workspace, ask: bool = False) -> None:
    """sql, inspect (and ask) on a damaged workspace: an answer or one line, never a traceback."""
    commands = [["sql", "SELECT doc_id, count(*) FROM chunks GROUP BY 1", "-w", ws.root]]
    commands.append(["inspect", "-w", ws.root])
    if ask:
        commands.append(["ask", "Who found the key?", "-w", ws.root, "--doc", "b", "--embeddings", "hashing"])
    for args in commands:
        result = nkw_in_process(capsys, *args)
        result.no_traceback()
        if result.code != 0:
            result.clean_failure()


def _restored(capsys, ws: Workspace, base) -> None:
    result = _build(capsys, ws, base)
    result.no_traceback()
    assert result.code == 0, (result.out, result.err)
    assert table_contents(ws) == base[2]


def test_removing_a_keeps_the_documents_whose_ids_start_with_a__(ws, base, capsys):
    result = nkw_in_process(capsys, "remove", "a", "-w", ws.root)
    assert result.code == 0 and "removed 1 document(s): a" in result.out
    assert doc_ids(ws) == ["a__extract_graph", "a__x", "b"]
    after = table_contents(ws)
    for table, rows in base[2].items():
        kept = [r for r in rows if "('doc_id', 'a')" not in r]
        assert after[table] == kept, table
    assert all(manifest_path(ws, d).exists() for d in ("a__x", "a__extract_graph", "b"))


def _entry(ws: Workspace, table: str, doc_id: str) -> Path:
    return ledger.entry_path(ws.root, ws.partition_path(table, doc_id))


LEDGER_DAMAGE = {
    "deleted": lambda p: p.unlink(),
    "garbled": lambda p: p.write_text("{not json"),
    "a list": lambda p: p.write_text("[1, 2]"),
    "wrong hash": lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "sha256": "0" * 64})),
    "a folder": lambda p: (p.unlink(), p.mkdir()),
}


@pytest.mark.parametrize("damage", sorted(LEDGER_DAMAGE))
def test_a_damaged_ledger_entry_hides_the_partition_until_a_build_restores_it(damage, ws, base, capsys):
    LEDGER_DAMAGE[damage](_entry(ws, "chunks", "b"))
    assert _sql_rows(capsys, ws, "chunks", "b") == 0 and _sql_rows(capsys, ws, "chunks", "a") > 0
    _readers_survive(capsys, ws)
    if damage == "a folder":
        shutil.rmtree(_entry(ws, "chunks", "b"))  # the one repair left to the operator: it is not a file
    _restored(capsys, ws, base)
    assert _sql_rows(capsys, ws, "chunks", "b") > 0


def _chunks_file(ws: Workspace, doc_id: str = "b") -> Path:
    return ws.partition_path("chunks", doc_id)


def _same_size_garbage(path: Path) -> None:
    path.write_bytes(os.urandom(path.stat().st_size))


PARTITION_DAMAGE = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: p.stat().st_size // 2]),
    "same-size garbage": _same_size_garbage,
    "parquet of another table": lambda p: pq.write_table(pa.table({"x": [1]}), p),
    "deleted": lambda p: p.unlink(),
    "a folder": lambda p: (p.unlink(), p.mkdir()),
    "a symlink loop": lambda p: (p.unlink(), p.symlink_to(p)),
}


@pytest.mark.parametrize("damage", sorted(PARTITION_DAMAGE))
def test_a_damaged_partition_is_never_read_and_a_build_restores_it(damage, ws, base, capsys):
    PARTITION_DAMAGE[damage](_chunks_file(ws))
    assert _sql_rows(capsys, ws, "chunks", "b") == 0 and _sql_rows(capsys, ws, "chunks", "a__x") > 0
    _readers_survive(capsys, ws, ask=True)
    if damage == "a folder":
        _chunks_file(ws).rmdir()
    _restored(capsys, ws, base)


MANIFEST_DAMAGE = {
    "deleted": lambda p: p.unlink(),
    "garbled": lambda p: p.write_text("{\"doc_id\": "),
    "a list": lambda p: p.write_text("[]"),
    "a stage record of the wrong shape": lambda p: p.write_text(
        json.dumps({"doc_id": "b", "stages": {"split_chunks": {"fingerprint": 1}, "x": []}})
    ),
    "another document's id": lambda p: p.write_text(p.read_text().replace('"doc_id": "b"', '"doc_id": "a"')),
}


@pytest.mark.parametrize("damage", sorted(MANIFEST_DAMAGE))
def test_a_damaged_manifest_costs_a_rebuild_of_its_document_only(damage, ws, base, capsys):
    MANIFEST_DAMAGE[damage](manifest_path(ws, "b"))
    _readers_survive(capsys, ws)
    result = _build(capsys, ws, base)
    result.no_traceback()
    assert result.code == 0, (result.out, result.err)
    assert table_contents(ws) == base[2]
    assert json.loads(manifest_path(ws, "b").read_text())["doc_id"] == "b"
    assert json.loads(manifest_path(ws, "a").read_text())["doc_id"] == "a"


def _litter(ws: Workspace) -> None:
    chunks = ws.table_dir("chunks")
    (chunks / "notes.txt").write_text("hello")
    pq.write_table(pq.read_table(chunks / "b.parquet"), chunks / "evil.parquet")
    (chunks / ".b.parquet.123.tmp").write_bytes(b"half a write")
    (chunks / "dir.parquet").mkdir()
    (chunks / "-rf.parquet").write_bytes(b"PAR1")
    (chunks / "new\nline.parquet").write_bytes(b"")
    (ws.tables_dir / "no_such_table").mkdir()
    pq.write_table(pa.table({"x": [1]}), ws.tables_dir / "no_such_table" / "x.parquet")
    (ws.tables_dir / "stray.parquet").write_bytes(b"PAR1")
    (ws.manifest_dir / "notes.txt").write_text("hello")
    (ws.manifest_dir / "zz.json").write_text("{garbage")
    (ws.manifest_dir / ".b.json.99.tmp").write_text("{")
    (ledger.ledger_root(ws.root) / "chunks" / "ghost.parquet.json").write_text('{"sha256": "0", "size": 4}')


def test_stray_files_are_left_out_and_nothing_else_changes(ws, base, capsys):
    _litter(ws)
    _readers_survive(capsys, ws, ask=True)
    count = "SELECT count(*) AS n FROM chunks"
    rows = nkw_in_process(capsys, "sql", count, "-w", ws.root, "--format", "json")
    assert json.loads(rows.out)[0]["n"] == len(base[2]["chunks"])
    _restored(capsys, ws, base)
    removed = nkw_in_process(capsys, "remove", "b", "-w", ws.root)
    assert removed.code == 0 and doc_ids(ws) == ["a", "a__extract_graph", "a__x"]


WORKSPACE_IS_A_FILE = [
    ["build", "IN", "-w", "WS", *FAST],
    ["remove", "a", "-w", "WS"],
    ["sql", "SELECT 1", "-w", "WS"],
    ["inspect", "-w", "WS"],
    ["ask", "Who?", "-w", "WS", "--embeddings", "hashing"],
    ["eval", "--questions", "Q", "-w", "WS", "--embeddings", "hashing", "--no-prefect"],
    ["export", "-w", "WS", "--doc", "a", "--format", "csv", "--out", "OUT"],
]


@pytest.mark.parametrize("args", WORKSPACE_IS_A_FILE, ids=lambda a: a[0])
def test_a_workspace_path_that_is_a_file_is_refused_in_one_line(args, base, tmp_path, capsys):
    target = tmp_path / "ws"
    target.write_text("not a workspace")
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"qid": "1", "doc_id": "a", "question": "Who?"}) + "\n")
    swap = {"IN": base[1][0], "WS": str(target), "Q": str(questions), "OUT": str(tmp_path / "out")}
    result = nkw_in_process(capsys, *[swap.get(a, a) for a in args])
    result.clean_failure()
    assert target.read_text() == "not a workspace"


@pytest.mark.parametrize("what", ["tables", "manifest", "ledger", "cache"])
def test_a_workspace_folder_that_is_a_file_is_refused_or_repaired(what, ws, base, capsys):
    folder = {"tables": ws.tables_dir, "manifest": ws.manifest_dir, "ledger": ledger.ledger_root(ws.root),
              "cache": ws.cache_dir}[what]
    shutil.rmtree(folder, ignore_errors=True)
    folder.write_text("in the way")
    _readers_survive(capsys, ws)
    result = _build(capsys, ws, base)
    result.no_traceback()
    if result.code != 0:
        result.clean_failure()
        assert folder.read_text() == "in the way"  # refused: nothing was changed


LOCKS = {
    "garbled": ("{nope", 0),
    "a dead process": (json.dumps({"pid": 2**22 + 7, "host": os.uname().nodename, "since": "x"}), 0),
    "a live process": (json.dumps({"pid": 1, "host": os.uname().nodename, "since": "x"}), 1),
    "another host": (json.dumps({"pid": 1, "host": "elsewhere", "since": "x"}), 1),
    "empty": ("", 0),
}


@pytest.mark.parametrize("kind", sorted(LOCKS))
def test_a_left_or_foreign_writer_lock(kind, ws, base, capsys):
    text, refused = LOCKS[kind]
    (ws.root / "writer.lock").write_text(text)
    result = _build(capsys, ws, base)
    if refused:
        result.clean_failure()
        assert "being written by pid 1" in result.err
    else:
        assert result.code == 0 and not (ws.root / "writer.lock").exists(), result.err
