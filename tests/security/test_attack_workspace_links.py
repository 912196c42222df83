"""Attack family "workspace damage", the escapes: links planted in a workspace to carry its writes
elsewhere. Writers refuse (one line, non-zero, nothing written outside) or replace the link itself;
readers never show what a link points to; links that stay inside the workspace keep working."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from flows.cli.main import main
from tasks.tables import ledger
from tasks.tables.io import Workspace
from tests.faults.attack_kit import FAST, GOOD_TEXT, OTHER_TEXT, nkw_in_process
from tests.faults.conftest import table_contents
from tests.security.conftest import snapshot


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    root = tmp_path_factory.mktemp("links")
    inputs = [root / "in" / "good.txt", root / "in" / "other.txt"]
    inputs[0].parent.mkdir()
    inputs[0].write_text(GOOD_TEXT)
    inputs[1].write_text(OTHER_TEXT)
    ws = Workspace.at(root / "ws")
    assert main(["build", *map(str, inputs), "-w", str(ws.root), *FAST]) == 0
    return ws, [str(p) for p in inputs], table_contents(ws)


@pytest.fixture()
def ws(base, tmp_path) -> Workspace:
    copy = Workspace.at(tmp_path / "ws")
    shutil.copytree(base[0].root, copy.root, symlinks=True)
    return copy


@pytest.fixture()
def outside(tmp_path) -> Path:
    folder = tmp_path / "outside"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    return folder


def _plant(folder: Path, outside: Path) -> None:
    """Move `folder` out of the workspace and leave a link to it in its place."""
    target = outside / folder.name
    shutil.move(str(folder), str(target))
    folder.symlink_to(target, target_is_directory=True)


def _changed_text(base, tmp_path) -> list[str]:
    """The inputs with one document changed, so a build has something to write."""
    changed = tmp_path / "changed" / "good.txt"
    changed.parent.mkdir()
    changed.write_text(GOOD_TEXT + "\nA new line about the bell tower.\n")
    return [str(changed), base[1][1]]


PLANTED = {
    "tables/chunks": lambda ws: ws.table_dir("chunks"),
    "tables": lambda ws: ws.tables_dir,
    "manifest": lambda ws: ws.manifest_dir,
    "manifest/partitions/chunks": lambda ws: ledger.ledger_root(ws.root) / "chunks",
    "cache": lambda ws: ws.cache_dir,
}


@pytest.mark.parametrize("where", sorted(PLANTED))
def test_a_folder_linked_outside_is_refused_and_nothing_is_written_there(where, ws, base, outside, tmp_path,
                                                                            capsys):
    folder = PLANTED[where](ws)
    folder.mkdir(parents=True, exist_ok=True)
    _plant(folder, outside)
    before = snapshot(outside)
    for args in (["build", *_changed_text(base, tmp_path)], ["remove", "other"]):
        result = nkw_in_process(capsys, *args, "-w", ws.root, *(FAST if args[0] == "build" else []))
        result.clean_failure()
        assert result.code == 2, result.err  # a refused input, as docs/reliability.md says
        assert "symbolic link" in result.err and where.split("/")[-1] in result.err
    assert snapshot(outside) == before


@pytest.mark.parametrize("where", ["runs", "cache"])
def test_an_evaluation_never_writes_through_a_folder_linked_outside(where, ws, outside, tmp_path, capsys):
    folder = ws.root / where
    folder.mkdir(exist_ok=True)
    _plant(folder, outside)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"qid": "q1", "doc_id": "good", "question": "Who found the key?"}) + "\n")
    before = snapshot(outside)
    result = nkw_in_process(
        capsys, "eval", "--questions", questions, "-w", ws.root, "--embeddings", "hashing", "--no-prefect"
    )
    result.clean_failure()
    assert result.code == 2, result.err
    assert "symbolic link" in result.err and snapshot(outside) == before


def test_a_link_planted_while_a_build_runs_is_refused_at_the_write(ws, base, outside, monkeypatch):
    from tasks.tables import io
    from tasks.tables.confine import WorkspaceEscape

    _plant(ws.table_dir("chunks"), outside)
    before = snapshot(outside)
    with pytest.raises(WorkspaceEscape, match="symbolic link"):
        io.write_table(ws, "chunks", [], "good")
    assert snapshot(outside) == before


def test_a_partition_linked_to_an_outside_file_is_not_read_and_the_link_is_replaced(ws, base, outside,
                                                                                    capsys):
    secret = outside / "secret.parquet"
    partition = ws.partition_path("chunks", "good")
    shutil.copy(ws.partition_path("chunks", "other"), secret)
    partition.unlink()
    partition.symlink_to(secret)
    before = snapshot(outside)
    query = "SELECT DISTINCT doc_id FROM chunks"
    sql = nkw_in_process(capsys, "sql", query, "-w", ws.root, "--format", "json")
    assert sql.code == 0 and json.loads(sql.out) == [{"doc_id": "other"}]
    result = nkw_in_process(capsys, "build", *base[1], "-w", ws.root, *FAST)
    assert result.code == 0, result.err
    assert not partition.is_symlink() and table_contents(ws) == base[2]
    assert snapshot(outside) == before


def test_a_lock_file_linked_outside_is_never_written_through(ws, base, outside, capsys):
    target = outside / "keep.txt"
    (ws.root / "writer.lock").symlink_to(target)
    result = nkw_in_process(capsys, "build", *base[1], "-w", ws.root, *FAST)
    assert result.code == 0, result.err  # "mine" is no lock: taken over, the link removed
    assert target.read_text() == "mine" and not (ws.root / "writer.lock").exists()


def test_links_that_stay_inside_the_workspace_are_accepted(ws, base, tmp_path, capsys):
    # An ablation variant shares its base's LLM cache through a link: `<ws>/variants/v/cache/llm`.
    (ws.cache_dir / "llm").mkdir(parents=True, exist_ok=True)
    variant = ws.root / "variants" / "v"
    for folder in ("tables", "manifest", "cache"):
        (variant / folder).mkdir(parents=True)
    (variant / "cache" / "llm").symlink_to(ws.cache_dir / "llm", target_is_directory=True)
    (ws.root / "notes").symlink_to(ws.tables_dir, target_is_directory=True)
    result = nkw_in_process(capsys, "build", *_changed_text(base, tmp_path), "-w", ws.root, *FAST)
    assert result.code == 0, result.err
    inside = nkw_in_process(capsys, "build", *base[1], "-w", variant, *FAST)
    assert inside.code == 0, inside.err
    assert os.path.realpath(variant / "cache" / "llm") == str(ws.cache_dir / "llm")
