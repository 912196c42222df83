"""Inputs that used to hang or exhaust memory: a FIFO, a huge sparse file, a device, a symlink
loop. Each is refused from `stat` (nothing is read), becomes a failures row, the other
documents build, and the exit status says an input was lost."""

from __future__ import annotations

import os
import shutil

import pytest

from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY
from tests.faults.conftest import nkw


@pytest.fixture()
def inputs(tmp_path):
    folder = tmp_path / "inputs"
    folder.mkdir()
    shutil.copy(SCREENPLAY, folder / "story.txt")
    os.mkfifo(folder / "pipe.txt")
    with open(folder / "huge.txt", "wb") as sparse:  # 64 GiB of holes: no disk used, 64 GiB if read
        sparse.truncate(64 << 30)
    (folder / "loop.txt").symlink_to(folder / "loop.txt")
    return folder


def test_a_fifo_a_sparse_file_a_device_and_a_loop_fail_alone(inputs, tmp_path):
    ws = Workspace.at(tmp_path / "ws")
    given = [str(inputs / n) for n in ("pipe.txt", "huge.txt", "loop.txt", "story.txt")] + ["/dev/zero"]
    result = nkw(
        "build", *given, "-w", str(ws.root), "--embeddings", "hashing", "--no-prefect", "-q", timeout=300
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    assert "not a regular file (a FIFO)" in result.stdout
    assert "document too large: 68,719,476,736 bytes" in result.stdout
    assert "not a regular file (a device)" in result.stdout
    assert "symlink loop" in result.stdout
    failures = read_frame(ws, "failures")
    ingest = failures[failures["stage"] == "ingest_documents"]
    assert len(ingest) == 4 and "no such file" not in " ".join(ingest["error"])
    assert read_frame(ws, "documents")["doc_id"].tolist() == ["story"]
    assert len(read_frame(ws, "chunks")) > 0  # the good document built in full


def test_a_folder_walk_reports_special_files_instead_of_opening_them(inputs, tmp_path):
    ws = Workspace.at(tmp_path / "ws")
    result = nkw(
        "build",
        str(inputs),
        "-w",
        str(ws.root),
        "--embeddings",
        "hashing",
        "--no-prefect",
        "-q",
        "--until",
        "split_chunks",
        timeout=300,
    )
    assert result.returncode == 1, result.stderr
    assert "pipe.txt: not a regular file" in result.stdout and "huge.txt: document too large" in result.stdout
    assert read_frame(ws, "documents")["doc_id"].tolist() == ["story"]


def test_a_symlink_loop_alone_is_named_as_such(tmp_path):
    loop = tmp_path / "loop.txt"
    loop.symlink_to(loop)
    result = nkw("build", str(loop), "-w", str(tmp_path / "ws"))
    assert result.returncode == 2 and result.stderr.strip() == f"error: symlink loop: {loop}"
