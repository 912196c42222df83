"""What docs/reliability.md promises, checked: a questions file that is a FIFO is named as one (not
"not found"), and a link inside an input folder is listed with its reason, never ingested silently."""

from __future__ import annotations

import os

import pytest

from tests.faults.attack_kit import INGEST_ONLY, GOOD_TEXT, OTHER_TEXT, doc_ids, nkw_in_process
from tasks.tables.io import Workspace


@pytest.mark.parametrize("command", ["eval", "ablate", "ask"])
def test_a_questions_file_that_is_a_fifo_is_named_as_one(command, tmp_path, capsys):
    os.mkfifo(tmp_path / "q.jsonl")
    args = [command, "--questions", tmp_path / "q.jsonl", "-w", tmp_path, "--embeddings", "hashing"]
    (tmp_path / "tables").mkdir()  # an (empty) workspace, so the questions file is what is checked
    result = nkw_in_process(capsys, *args, seconds=30)
    result.clean_failure()
    assert "FIFO" in result.err and "not found" not in result.err, result.err


def test_a_link_in_an_input_folder_is_listed_not_followed(tmp_path, capsys):
    folder, elsewhere = tmp_path / "in", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "good.txt").write_text(GOOD_TEXT)
    (elsewhere / "private.txt").write_text(OTHER_TEXT)
    (folder / "link.txt").symlink_to(elsewhere / "private.txt")
    result = nkw_in_process(capsys, "build", folder, "-w", tmp_path / "ws", *INGEST_ONLY)
    result.no_traceback()
    assert result.code == 1
    assert "link.txt: symbolic link" in result.out and "INCOMPLETE: 1 input(s) not ingested" in result.out
    assert doc_ids(Workspace.at(tmp_path / "ws")) == ["good"]


def test_a_file_named_directly_through_a_link_is_still_built(tmp_path, capsys):
    (tmp_path / "real.txt").write_text(GOOD_TEXT)
    (tmp_path / "named.txt").symlink_to(tmp_path / "real.txt")
    result = nkw_in_process(capsys, "build", tmp_path / "named.txt", "-w", tmp_path / "ws", *INGEST_ONLY)
    assert result.code == 0, result.out + result.err
