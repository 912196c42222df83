"""The build flow end to end on the bundled samples: Prefect run, skipping, crash recovery,
bad input."""

from __future__ import annotations

import shutil

import pytest

from flows.build import runner
from flows.build_corpus import build_with_prefect
from flows.build.corpus import build
from flows.stages import STAGES
from tasks.tables.io import Workspace, read_frame, read_table
from tests.conftest import SCREENPLAY, STORY


def _table_digests(workspace: Workspace) -> dict[str, str]:
    from tasks.tables.io import file_sha256

    return {
        str(p.relative_to(workspace.root)): file_sha256(p)
        for p in sorted(workspace.tables_dir.rglob("*.parquet"))
    }


def test_prefect_flow_builds_every_stage_then_skips(tmp_path, hashing_settings, prefect_harness):
    workspace = Workspace.at(tmp_path / "ws")
    first = build_with_prefect([str(SCREENPLAY), str(STORY)], workspace, hashing_settings, quiet=True)
    assert first.used_prefect and first.ok
    assert first.count("built") == 2 * len(STAGES) and first.count("failed") == 0
    sections = read_frame(workspace, "sections", "the_lighthouse_key")
    assert (sections["section_kind"] == "scene").sum() == 16
    second = build_with_prefect([str(SCREENPLAY), str(STORY)], workspace, hashing_settings, quiet=True)
    assert not second.used_prefect  # nothing changed: the manifest alone decides, no server starts
    assert second.count("skipped") == 2 * len(STAGES) and second.count("built") == 0


def test_changed_settings_rebuild_only_affected_stages(tmp_path, hashing_settings):
    workspace = Workspace.at(tmp_path / "ws")
    build([str(STORY)], workspace, hashing_settings, quiet=True)
    smaller = hashing_settings.model_copy(
        update={"split_chunks": hashing_settings.split_chunks.model_copy(update={"chunk_tokens": 100})}
    )
    report = build([str(STORY)], workspace, smaller, quiet=True)
    statuses = {o.stage: o.status for o in report.documents[0].outcomes}
    assert statuses["segment_sections"] == "skipped" and statuses["split_chunks"] == "built"
    assert len(read_frame(workspace, "chunks", "the_fisherman_and_his_wife")) > 6


def test_killed_build_resumes_to_identical_tables(tmp_path, hashing_settings, monkeypatch):
    clean = Workspace.at(tmp_path / "clean")
    build([str(SCREENPLAY), str(STORY)], clean, hashing_settings, quiet=True)

    crashed = Workspace.at(tmp_path / "crashed")
    calls = {"n": 0}
    real_save = runner.save_manifest

    def dying_save(workspace, manifest):
        calls["n"] += 1
        if calls["n"] == 8:  # after a table was committed but before its manifest entry: the worst moment
            raise KeyboardInterrupt("killed")
        real_save(workspace, manifest)

    monkeypatch.setattr(runner, "save_manifest", dying_save)
    with pytest.raises(KeyboardInterrupt):
        build([str(SCREENPLAY), str(STORY)], crashed, hashing_settings, quiet=True)
    monkeypatch.setattr(runner, "save_manifest", real_save)
    resumed = build([str(SCREENPLAY), str(STORY)], crashed, hashing_settings, quiet=True)
    assert resumed.ok and resumed.count("skipped") > 0 and resumed.count("built") > 0
    assert _table_digests(crashed) == _table_digests(clean)
    assert not list(crashed.tables_dir.rglob("*.tmp"))


def test_bad_inputs_do_not_stop_the_build(tmp_path, hashing_settings):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    shutil.copy(STORY, inputs / "story.txt")
    (inputs / "empty.txt").write_text("")
    (inputs / "binary.txt").write_bytes(bytes(range(256)) * 40)
    (inputs / "latin1.txt").write_bytes("Le café était fermé. Marie attendit.".encode("latin-1"))
    (inputs / "noheadings.fountain").write_text("JOHN\nHello there.\n\nMARY\nHi.\n")
    (inputs / "big.txt").write_text(("The sea was calm. " * 12 + "\n\n") * 25_000)  # about 5 MB
    workspace = Workspace.at(tmp_path / "ws")
    report = build([str(inputs)], workspace, hashing_settings, quiet=True)
    failures = read_frame(workspace, "failures")
    by_doc = dict(zip(failures["doc_id"], failures["error"]))
    assert "empty document" in by_doc["empty"] and "binary" in by_doc["binary"]
    built = set(read_frame(workspace, "documents")["doc_id"])
    assert {"story", "latin1", "noheadings", "big"} <= built
    warnings = [w for d in report.documents for o in d.outcomes for w in o.warnings]
    assert any("no scene headings" in w for w in warnings)
    assert read_table(workspace, "chunks", "big").num_rows > 1000
    assert any("not UTF-8" in n for n in report.notices)


def test_failing_stage_is_recorded_and_blocks_only_its_document(tmp_path, hashing_settings, monkeypatch):
    from flows import stages as stage_module

    original = stage_module.STAGES_BY_NAME["split_chunks"]

    def explode(ctx):
        if ctx.doc_id == "the_fisherman_and_his_wife":
            raise RuntimeError("chunker exploded")
        return original.run(ctx)

    patched = [
        s if s.name != "split_chunks" else type(s)(**{**s.__dict__, "run": explode})
        for s in stage_module.STAGES
    ]
    workspace = Workspace.at(tmp_path / "ws")
    report = build([str(SCREENPLAY), str(STORY)], workspace, hashing_settings, stages=patched, quiet=True)
    by_doc = {d.doc_id: {o.stage: o.status for o in d.outcomes} for d in report.documents}
    assert by_doc["the_fisherman_and_his_wife"]["split_chunks"] == "failed"
    assert by_doc["the_fisherman_and_his_wife"]["embed_texts"] == "blocked"
    assert set(by_doc["the_lighthouse_key"].values()) == {"built"}
    failures = read_frame(workspace, "failures")
    assert failures["error"].str.contains("chunker exploded").any()
    # Fixed code: the failure disappears on the next build.
    report = build([str(SCREENPLAY), str(STORY)], workspace, hashing_settings, quiet=True)
    assert report.ok and read_frame(workspace, "failures").empty


def test_manifest_records_the_settings_of_each_stage(tmp_path, hashing_settings):
    from tasks.tables.manifest import load_manifest

    off = hashing_settings.model_copy(
        update={"extract_facts": hashing_settings.extract_facts.model_copy(update={"enabled": False})}
    )
    workspace = Workspace.at(tmp_path / "ws")
    build([str(STORY)], workspace, off, quiet=True)
    manifest = load_manifest(workspace, "the_fisherman_and_his_wife")
    assert manifest.stages["extract_facts"].details["config"]["enabled"] is False
    assert manifest.stages["canonicalize_entities"].details["config"]["enabled"] is True
    assert read_frame(workspace, "atomic_facts", "the_fisherman_and_his_wife").empty
