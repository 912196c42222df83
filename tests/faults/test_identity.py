"""One file is one document however it is named; a file that stops being a document stops
being served."""

from __future__ import annotations

import os
import shutil

from flows.cli.main import main
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY


def test_relative_absolute_and_copied_paths_are_one_document(tmp_path, monkeypatch, capsys):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    shutil.copy(SCREENPLAY, tmp_path / "a" / "key.txt")
    shutil.copy(SCREENPLAY, tmp_path / "b" / "key.txt")
    (tmp_path / "link.txt").symlink_to(tmp_path / "a" / "key.txt")
    ws = Workspace.at(tmp_path / "ws")
    monkeypatch.chdir(tmp_path / "a")
    common = ["-w", str(ws.root), "--embeddings", "hashing", "--no-prefect", "-q", "--until", "split_chunks"]
    assert main(["build", "key.txt", str(tmp_path / "a" / "key.txt"), "../link.txt", *common]) == 0
    assert main(["build", str(tmp_path / "b" / "key.txt"), *common]) == 0  # same content, another folder
    assert main(["build", os.path.join("..", "a", "key.txt"), *common]) == 0
    out = capsys.readouterr().out
    assert "same content as" in out
    assert read_frame(ws, "documents")["doc_id"].tolist() == ["key"]
    assert "every stage up to date" in out.strip().splitlines()[-1]


def test_a_document_whose_file_becomes_empty_is_no_longer_served(tmp_path, capsys):
    source = tmp_path / "key.txt"
    shutil.copy(SCREENPLAY, source)
    ws = Workspace.at(tmp_path / "ws")
    common = ["-w", str(ws.root), "--embeddings", "hashing", "--no-prefect", "-q"]
    assert main(["build", str(source), *common]) == 0
    source.write_bytes(b"")
    assert main(["build", str(source), *common]) == 1
    assert "empty document" in capsys.readouterr().out
    rc = main(["ask", "Who keeps the key?", "-w", str(ws.root), "--doc", "key", "--embeddings", "hashing"])
    err = capsys.readouterr().err
    assert rc == 2 and "is not served: input no longer a document: empty document" in err
    shutil.copy(SCREENPLAY, source)  # fixed: served again after the next build
    assert main(["build", str(source), *common]) == 0
    capsys.readouterr()
    assert (
        main(["ask", "Who keeps the key?", "-w", str(ws.root), "--doc", "key", "--embeddings", "hashing"])
        == 0
    )
