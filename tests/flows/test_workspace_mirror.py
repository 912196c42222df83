"""The workspace mirrors its corpus: remove, prune, stale invalidation after a failed stage on
a changed document, and one writer at a time."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys

import pytest

from flows.cli import main as cli
from flows.build.corpus import build
from flows.evaluation.evaluate import evaluate
from flows.inspection.inspect_workspace import inspect_json, inspect_text
from flows.stages import STAGES, select_stages
from tasks.tables.io import Workspace, read_frame
from tasks.tables.lock import WorkspaceLocked, WriterLock, lock_path, read_holder
from tasks.tables.manifest import load_manifest, manifest_path
from tasks.tables.warehouse import run_query
from tests.conftest import SAMPLES, SCREENPLAY, STORY

STORY_ID = "the_fisherman_and_his_wife"


def _copy(workspace: Workspace, tmp_path) -> Workspace:
    target = tmp_path / "ws"
    shutil.copytree(workspace.root, target)
    return Workspace.at(target)


def _files_of(workspace: Workspace, doc_id: str) -> list[str]:
    return [str(p) for p in workspace.tables_dir.rglob("*.parquet") if p.stem.split("__")[0] == doc_id]


def test_remove_deletes_every_row_manifest_and_answers(tmp_path, sample_workspace, hashing_settings):
    workspace = _copy(sample_workspace, tmp_path)
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(p.read_text() for p in sorted(SAMPLES.glob("*.questions.jsonl"))))
    evaluate(workspace, questions, hashing_settings, system="hybrid")
    assert _files_of(workspace, STORY_ID)
    assert cli.main(["remove", STORY_ID, "--workspace", str(workspace.root)]) == 0
    assert not _files_of(workspace, STORY_ID) and not manifest_path(workspace, STORY_ID).exists()
    for table in ("documents", "chunks", "entities", "embeddings", "qa_answers"):
        rows = run_query(workspace, f"SELECT count(*) AS n FROM {table} WHERE doc_id = ?", [STORY_ID])
        assert rows.column("n")[0].as_py() == 0, table
    assert set(read_frame(workspace, "qa_answers")["doc_id"]) == {"the_lighthouse_key"}
    assert cli.main(["remove", "no-such-doc", "--workspace", str(workspace.root)]) == cli.EXIT_USAGE


def test_build_prune_removes_documents_not_in_the_inputs(tmp_path, sample_workspace, hashing_settings):
    workspace = _copy(sample_workspace, tmp_path)
    report = build([str(SCREENPLAY)], workspace, hashing_settings, quiet=True, prune=True)
    assert report.ok and report.removed == [STORY_ID] and report.count("built") == 0
    assert set(read_frame(workspace, "documents")["doc_id"]) == {"the_lighthouse_key"}
    assert not _files_of(workspace, STORY_ID)


def test_failed_stage_on_a_changed_document_withdraws_downstream_rows(tmp_path, hashing_settings):
    stages = select_stages(until="embed_texts")
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    story = inputs / "story.txt"
    shutil.copy(STORY, story)
    workspace = Workspace.at(tmp_path / "ws")
    assert build([str(inputs)], workspace, hashing_settings, stages=stages, quiet=True).ok
    assert not read_frame(workspace, "embeddings", "story").empty

    def explode(ctx):
        raise RuntimeError("chunker exploded")

    broken = [s if s.name != "split_chunks" else type(s)(**{**s.__dict__, "run": explode}) for s in stages]
    story.write_text(story.read_text() + "\n\nThe fisherman went home and slept.\n")
    report = build([str(inputs)], workspace, hashing_settings, stages=broken, quiet=True)
    assert not report.ok
    for table in ("chunks", "sentences", "term_postings", "embeddings"):
        assert read_frame(workspace, table, "story").empty, table  # old rows are not served as current
    assert "The fisherman went home" in read_frame(workspace, "documents", "story")["text"].iloc[0]
    manifest = load_manifest(workspace, "story")
    assert manifest.stages["split_chunks"].status == "failed"
    assert {manifest.stages[s].status for s in ("split_sentences", "index_terms", "embed_texts")} == {"stale"}
    assert set(inspect_json(workspace)["stale"]["story"]) >= {"split_chunks", "embed_texts"}
    assert "STALE" in inspect_text(workspace)
    fixed = build([str(inputs)], workspace, hashing_settings, stages=stages, quiet=True)
    assert fixed.ok and not inspect_json(workspace)["stale"]
    assert not read_frame(workspace, "embeddings", "story").empty
    assert [s.name for s in STAGES][: len(stages)] == [s.name for s in stages]


def test_second_writer_fails_at_once_naming_the_holder(tmp_path, hashing_settings, capsys):
    workspace = Workspace.at(tmp_path / "ws")
    holder = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock_path(workspace).parent.mkdir(parents=True)
        lock_path(workspace).write_text(
            f'{{"pid": {holder.pid}, "host": "{socket.gethostname()}", "since": "2026-01-01T00:00:00+00:00"}}'
        )
        with pytest.raises(
            WorkspaceLocked, match=f"pid {holder.pid} on {socket.gethostname()} since 2026-01-01"
        ):
            build([str(STORY)], workspace, hashing_settings, quiet=True)
        code = cli.main(
            [
                "build",
                str(STORY),
                "--workspace",
                str(workspace.root),
                "--no-prefect",
                "--embeddings",
                "hashing",
            ]
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert code == cli.EXIT_FAILED and len(err) == 1 and f"pid {holder.pid}" in err[0]
    finally:
        holder.kill()
        holder.wait()
    # The holder was killed: its lock is stale and the next writer takes it over.
    report = build(
        [str(STORY)], workspace, hashing_settings, stages=select_stages(until="split_chunks"), quiet=True
    )
    assert report.ok and read_holder(workspace) is None


def test_lock_is_exclusive_and_released(tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    with WriterLock(workspace, "build") as lock:
        assert read_holder(workspace).pid == os.getpid() and lock.command == "build"
        with pytest.raises(WorkspaceLocked):
            WriterLock(workspace, "remove").acquire()
    assert read_holder(workspace) is None
