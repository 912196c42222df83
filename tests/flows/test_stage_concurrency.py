"""A document's stages run as a dependency graph (`[build] stage_concurrency`): the tables are the
same as when they run one after another, offline, through Prefect and through the test LLM server."""

from __future__ import annotations

import sys

import pandas as pd
from prefect import flow
from prefect.context import TaskRunContext

from flows.build.corpus import build, make_resources
from flows.build.runner import Resources
from flows.build_corpus import _stage_as_task, build_with_prefect
from flows.stages import STAGES
from schemas.config import Settings, load_settings
from tasks.embeddings import HashingEmbedder
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.stage import RawDocument
from tasks.tables.io import Workspace, file_sha256, read_frame
from tasks.tables.manifest import DocumentManifest, load_manifest
from tests.conftest import SCREENPLAY, STORY
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder


def _settings(stage_concurrency: int, **overrides) -> Settings:
    return load_settings(
        overrides={
            "embed_texts": {"backend": "hashing"},
            "build": {"stage_concurrency": stage_concurrency},
            **overrides,
        }
    )


def _digests(workspace: Workspace, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {
        str(p.relative_to(workspace.tables_dir)): file_sha256(p)
        for p in sorted(workspace.tables_dir.rglob("*.parquet"))
        if p.relative_to(workspace.tables_dir).parts[0] not in skip
    }


def _fingerprints(workspace: Workspace, doc_id: str) -> dict[str, tuple[str, dict]]:
    manifest = load_manifest(workspace, doc_id)
    return {name: (r.fingerprint, r.outputs) for name, r in manifest.stages.items()}


def test_offline_tables_equal_sequential_ones(tmp_path):
    paths = [str(SCREENPLAY), str(STORY)]
    in_order, concurrent = Workspace.at(tmp_path / "one"), Workspace.at(tmp_path / "four")
    first = build(paths, in_order, _settings(1), quiet=True)
    second = build(paths, concurrent, _settings(4), quiet=True)
    assert first.ok and second.ok
    assert [[o.stage for o in d.outcomes] for d in second.documents] == [[s.name for s in STAGES]] * 2
    assert _digests(concurrent) == _digests(in_order) and len(_digests(in_order)) > 40
    for doc in ("the_lighthouse_key", "the_fisherman_and_his_wife"):
        assert _fingerprints(concurrent, doc) == _fingerprints(in_order, doc)
    again = build(paths, concurrent, _settings(4), quiet=True)
    assert again.count("skipped") == 2 * len(STAGES)


def test_prefect_stage_task_runs_from_worker_threads_belong_to_the_flow_run(tmp_path, prefect_harness):
    seen: dict[str, tuple[object, object]] = {}

    def recording(stage):
        def run(ctx):
            task_run = TaskRunContext.get().task_run
            seen[f"{ctx.doc_id}/{stage.name}"] = (task_run.name, task_run.flow_run_id)
            return stage.run(ctx)

        return type(stage)(**{**stage.__dict__, "run": run})

    patched = [recording(s) for s in STAGES]
    workspace = Workspace.at(tmp_path / "ws")
    report = build_with_prefect([str(SCREENPLAY)], workspace, _settings(4), stages=patched, quiet=True)
    assert report.used_prefect and report.ok
    assert len(seen) == len(STAGES)
    flow_runs = {flow_run for _, flow_run in seen.values()}
    assert len(flow_runs) == 1 and None not in flow_runs  # no stage ran as a task run of its own
    assert seen["the_lighthouse_key/extract_graph"][0] == "extract_graph[the_lighthouse_key]"
    sequential = Workspace.at(tmp_path / "one")
    build([str(SCREENPLAY)], sequential, _settings(1), quiet=True)
    assert _digests(workspace) == _digests(sequential)


def _llm_build(workspace: Workspace, url: str, stage_concurrency: int):
    llm = fast_llm_settings(url, concurrency=8)
    settings = _settings(stage_concurrency).model_copy(update={"llm": llm})
    with OpenAICompatibleClient(llm) as client:
        resources = make_resources(settings, llm=client)
        return build([str(SCREENPLAY)], workspace, settings, resources=resources, quiet=True)


def _calls(workspace: Workspace) -> pd.DataFrame:
    calls = read_frame(workspace, "llm_calls").drop(columns=["latency_ms"])
    return calls.sort_values(["stage", "item_id", "call_key", "attempt"]).reset_index(drop=True)


def test_llm_tables_equal_sequential_ones(tmp_path):
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder, latency_s=0.01) as server:
        in_order, concurrent = Workspace.at(tmp_path / "one"), Workspace.at(tmp_path / "four")
        assert _llm_build(in_order, server.url, 1).ok
        assert _llm_build(concurrent, server.url, 4).ok
    assert _digests(concurrent, skip=("llm_calls",)) == _digests(in_order, skip=("llm_calls",))
    pd.testing.assert_frame_equal(_calls(concurrent), _calls(in_order))
    # With the combined extraction (the default) narrative and facts resolve extract_graph's replies.
    combined = {"extract_narrative", "extract_facts"}
    assert set(_calls(in_order)["stage"]) == {s.name for s in STAGES if s.uses_llm} - combined


class _WatchedStages(dict):
    """A manifest's stage records that count reads by Prefect's code (its parameter walk)."""

    by_prefect = 0

    def _note(self) -> None:
        if sys._getframe(2).f_globals.get("__name__", "").startswith("prefect."):  # the direct caller
            type(self).by_prefect += 1

    def items(self):
        self._note()
        return super().items()

    def values(self):
        self._note()
        return super().values()

    def __iter__(self):
        self._note()
        return super().__iter__()


def test_prefect_does_not_walk_the_manifest_other_stages_are_changing(tmp_path, prefect_harness):
    # Walking it raced with the document's other stages committing ("dictionary changed size").
    manifest = DocumentManifest("doc", stages=_WatchedStages())
    settings = _settings(1)
    resources = Resources(settings=settings, embedder_factory=HashingEmbedder)
    document = RawDocument("doc", "Doc", "INT. ROOM - DAY\n\nAnna waits.", "en", "screenplay", "doc.txt")
    workspace = Workspace.at(tmp_path / "ws")

    @flow
    def one_stage():
        return _stage_as_task(workspace, document, STAGES[0], settings, resources, manifest, "fp")

    assert one_stage().status == "built"
    assert manifest.stages["ingest_documents"].fingerprint == "fp"
    assert _WatchedStages.by_prefect == 0
