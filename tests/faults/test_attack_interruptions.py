"""Attack family "interruptions": a build or a removal cut at the worst moment (between the ledger
entry and the rename, during a manifest save, out of disk, a Ctrl-C, a kill -9). Readers see
each partition before or after a write, never neither; the cut run never reports success; the
next run ends where an uninterrupted one would."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.tables import io
from tasks.tables.io import Workspace, read_table
from tasks.tables.warehouse import table_files
from tests.conftest import REPO
from tests.faults.attack_kit import FAST, GOOD_TEXT, OTHER_TEXT, doc_ids, nkw_in_process
from tests.faults.conftest import table_contents

CHANGED = GOOD_TEXT + "\nA new line about the bell tower and the brass key.\n"


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A built workspace, its inputs, and what a clean build holds once `good.txt` changed."""
    root = tmp_path_factory.mktemp("interrupt")
    (root / "in").mkdir()
    good = root / "in" / "good.txt"
    good.write_text(GOOD_TEXT)
    (root / "in" / "other.txt").write_text(OTHER_TEXT)
    inputs = [str(good), str(root / "in" / "other.txt")]
    ws, reference = Workspace.at(root / "ws"), Workspace.at(root / "reference")
    assert main(["build", *inputs, "-w", str(ws.root), *FAST]) == 0
    shutil.copytree(ws.root, reference.root)
    good.write_text(CHANGED)
    assert main(["build", *inputs, "-w", str(reference.root), *FAST]) == 0
    good.write_text(GOOD_TEXT)
    return ws, good, inputs, table_contents(reference)


@pytest.fixture()
def ws(base, tmp_path) -> Workspace:
    """A copy of the built workspace, with `good.txt` changed for the length of the test."""
    copy = Workspace.at(tmp_path / "ws")
    shutil.copytree(base[0].root, copy.root)
    base[1].write_text(CHANGED)
    yield copy
    base[1].write_text(GOOD_TEXT)


def _finishes_like_a_clean_build(capsys, ws: Workspace, base, killed: bool = False) -> None:
    assert killed or not (ws.root / "writer.lock").exists()  # a kill -9 leaves it: the next run takes over
    result = nkw_in_process(capsys, "build", *base[2], "-w", ws.root, *FAST)
    result.no_traceback()
    assert result.code == 0, (result.out, result.err)
    assert table_contents(ws) == base[3]


def _temp_files(ws: Workspace) -> list[Path]:
    return [p for p in ws.root.rglob("*.tmp")]


def test_readers_see_every_partition_while_a_build_rewrites_it(ws, base, capsys, monkeypatch):
    """The moment between the ledger entry and the rename, for every partition the build rewrites."""
    write = io._atomic_write_bytes
    seen: list[str] = []

    def watched(path: Path, payload: bytes) -> None:
        if path.suffix == ".parquet" and path.exists():
            table = path.parent.name
            assert path in ws.partitions(table), f"{path.name} of {table} vanished for readers"
            assert path in table_files(ws)[0][table], f"{path.name} of {table} vanished for nkw sql"
            seen.append(table)
        write(path, payload)

    monkeypatch.setattr(io, "_atomic_write_bytes", watched)
    result = nkw_in_process(capsys, "build", *base[2], "-w", ws.root, *FAST)
    assert result.code == 0, result.err
    assert len(seen) > 10 and "chunks" in seen
    assert table_contents(ws) == base[3]


def _cut_at(monkeypatch, table: str, error: BaseException, after_write: bool = False) -> list[int]:
    """Interrupt the write of `table`'s partition of `good` (after the ledger entry, before the rename)."""
    write = io._atomic_write_bytes
    hits: list[int] = []

    def cut(path: Path, payload: bytes) -> None:
        if path.parent.name == table and path.stem == "good":
            hits.append(1)
            if after_write:
                write(path, payload)
            raise error
        write(path, payload)

    monkeypatch.setattr(io, "_atomic_write_bytes", cut)
    return hits


def test_a_ctrl_c_between_the_ledger_entry_and_the_rename(ws, base, capsys, monkeypatch):
    chunks_before = read_table(ws, "chunks", "good").num_rows
    hits = _cut_at(monkeypatch, "chunks", KeyboardInterrupt())
    result = nkw_in_process(capsys, "build", *base[2], "-w", ws.root, *FAST)
    assert hits and result.code == 130 and result.err.strip() == "interrupted", result.err
    assert read_table(ws, "chunks", "good").num_rows == chunks_before  # the old partition, still read
    assert _temp_files(ws) == []
    monkeypatch.undo()
    _finishes_like_a_clean_build(capsys, ws, base)


@pytest.mark.parametrize("table", ["chunks", "documents", "entities"])
def test_a_full_disk_fails_the_build_in_one_line_and_loses_nothing_else(table, ws, base, capsys, monkeypatch):
    other_before = table_contents(ws)
    hits = _cut_at(monkeypatch, table, OSError(errno.ENOSPC, "No space left on device"))
    result = nkw_in_process(capsys, "build", *base[2], "-w", ws.root, *FAST)
    assert "Traceback" not in result.out + result.err
    assert hits and result.code != 0, result.out
    # One line naming the cause (the build stops: every later write would meet the same full disk).
    assert [line for line in result.err.splitlines() if line.strip()] == [result.err.strip()]
    assert "No space left on device" in result.err
    after = table_contents(ws)
    for name, rows in other_before.items():  # the other document keeps every row
        assert [r for r in after[name] if "'other'" in r] == [r for r in rows if "'other'" in r], name
    assert _temp_files(ws) == []
    monkeypatch.undo()
    _finishes_like_a_clean_build(capsys, ws, base)


def test_a_ctrl_c_while_a_manifest_is_saved(ws, base, capsys, monkeypatch):
    from tasks.tables import manifest

    save = manifest.atomic_write_text
    hits: list[int] = []

    def cut(path: Path, text: str) -> None:
        if path.name == "good.json" and len(hits) == 2:
            raise KeyboardInterrupt
        hits.append(1)
        save(path, text)

    monkeypatch.setattr(manifest, "atomic_write_text", cut)
    result = nkw_in_process(capsys, "build", *base[2], "-w", ws.root, *FAST)
    assert result.code == 130, result.err
    json.loads((ws.manifest_dir / "good.json").read_text())  # the last complete save, never half of one
    monkeypatch.undo()
    _finishes_like_a_clean_build(capsys, ws, base)


def test_files_a_killed_writer_left_half_written_are_never_read(ws, base, capsys):
    chunks = ws.partition_path("chunks", "good")
    (chunks.parent / f".{chunks.name}.k1ll3d.tmp").write_bytes(chunks.read_bytes()[:100])
    (ws.manifest_dir / ".good.json.k1ll3d.tmp").write_text('{"doc_id": "go')
    entry_dir = ws.root / "manifest" / "partitions" / "chunks"
    (entry_dir / ".good.parquet.json.k1ll3d.tmp").write_text('{"sha')
    query = "SELECT count(*) AS n FROM chunks WHERE doc_id = 'good'"
    sql = nkw_in_process(capsys, "sql", query, "-w", ws.root, "--format", "json")
    assert json.loads(sql.out) == [{"n": read_table(ws, "chunks", "good").num_rows}]
    _finishes_like_a_clean_build(capsys, ws, base)


def test_a_removal_cut_short_can_be_finished(ws, base, capsys, monkeypatch):
    other_before = {t: [r for r in rows if "'other'" in r] for t, rows in table_contents(ws).items()}
    unlink = Path.unlink
    calls: list[Path] = []

    def cut(self: Path, missing_ok: bool = False) -> None:
        calls.append(self)
        if len(calls) == 3:  # the manifest and two partitions are gone, the rest is not
            raise KeyboardInterrupt
        unlink(self, missing_ok=missing_ok)

    monkeypatch.setattr(Path, "unlink", cut)
    assert nkw_in_process(capsys, "remove", "good", "-w", ws.root).code == 130
    monkeypatch.undo()
    again = nkw_in_process(capsys, "remove", "good", "-w", ws.root)
    assert again.code == 0, again.err
    assert doc_ids(ws) == ["other"]
    assert not [p for p in ws.tables_dir.rglob("good*.parquet")]
    after = table_contents(ws)
    assert {t: [r for r in rows if "'other'" in r] for t, rows in after.items()} == other_before


def test_a_kill_9_in_the_middle_of_a_build_then_a_rebuild(ws, base, capsys):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "flows.cli.main", "build", *base[2], "-w", str(ws.root), *FAST],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    manifest = ws.manifest_dir / "good.json"
    start = manifest.stat().st_mtime_ns
    deadline = time.monotonic() + 60
    while process.poll() is None and time.monotonic() < deadline:
        if manifest.stat().st_mtime_ns != start:  # the first stage of the changed document is recorded
            break
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    _finishes_like_a_clean_build(capsys, ws, base, killed=True)
