"""`--runner process`: documents built in worker processes on this machine give the same tables as
the thread runner, print their stage lines once, and keep the LLM bound shared with the process
that started the build (never more requests in flight than `[llm] concurrency`)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from flows.build.corpus import build, make_resources
from flows.build.sessions import worker_settings
from flows.build_corpus import build_with_prefect
from flows.stages import STAGES
from schemas.config import Settings, load_settings
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.tables.io import Workspace, file_sha256, read_frame
from tests.conftest import SCREENPLAY, STORY
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

PATHS = [str(SCREENPLAY), str(STORY)]


def _settings(**overrides) -> Settings:
    return load_settings(
        overrides={"embed_texts": {"backend": "hashing"}, "build": {"concurrency": 2}, **overrides}
    )


def _digests(workspace: Workspace, skip: tuple[str, ...] = ()) -> dict[str, str]:
    return {
        str(p.relative_to(workspace.tables_dir)): file_sha256(p)
        for p in sorted(workspace.tables_dir.rglob("*.parquet"))
        if p.relative_to(workspace.tables_dir).parts[0] not in skip
    }


def test_worker_processes_build_the_tables_of_the_thread_runner(tmp_path, prefect_harness, capfd):
    threads, processes = Workspace.at(tmp_path / "threads"), Workspace.at(tmp_path / "processes")
    assert build(PATHS, threads, _settings(), quiet=True).ok
    capfd.readouterr()
    report = build_with_prefect(PATHS, processes, _settings(), runner="process")
    assert report.ok and report.used_prefect
    assert [[o.status for o in d.outcomes] for d in report.documents] == [["built"] * len(STAGES)] * 2
    assert _digests(processes) == _digests(threads) and len(_digests(threads)) > 40
    lines = capfd.readouterr().err.splitlines()
    # The workers have exited cleanly: their frozen heaps were freed (no DuckDB binding report).
    assert not [line for line in lines if "nanobind" in line or "leaked" in line]
    # No line per stage: the workers built every stage without a failure or warning to report.
    for doc_id in ("the_lighthouse_key", "the_fisherman_and_his_wife"):
        assert not [line for line in lines if doc_id in line and any(f" {s.name} " in line for s in STAGES)]
    # Each document line once (here, in the process that started the build), with its count.
    finished = sorted(line.split("] ")[1].split(" (")[0] for line in lines if line.startswith("[documents "))
    assert finished == ["the_fisherman_and_his_wife done", "the_lighthouse_key done"]
    again = build_with_prefect(PATHS, processes, _settings(), runner="process", quiet=True)
    assert again.ok and again.count("skipped") == 2 * len(STAGES) and not again.used_prefect
    # --force reaches the workers: the forced stage runs again there (its readers see the same output).
    forced = replace(make_resources(_settings()), force=frozenset({"index_terms"}))
    rebuilt = build_with_prefect(
        PATHS, processes, _settings(), resources=forced, runner="process", quiet=True
    )
    assert rebuilt.ok and rebuilt.count("built") == 2 and rebuilt.count("skipped") == 2 * (len(STAGES) - 1)


def test_workers_build_offline_when_the_build_fell_back_to_the_heuristics():
    settings = _settings(llm={"url": "http://127.0.0.1:9/v1", "model": TEST_MODEL})
    fallen_back = make_resources(settings, llm=None)  # what preflight leaves when the server is down
    assert worker_settings(fallen_back)["llm"]["url"] is None
    assert worker_settings(make_resources(settings, llm=object()))["llm"]["url"] == "http://127.0.0.1:9/v1"


def test_worker_processes_keep_the_shared_llm_bound(tmp_path, prefect_harness):
    def llm_build(workspace: Workspace, runner: str, url: str):
        llm = fast_llm_settings(url, concurrency=2, timeout_s=10.0, deadline_s=60.0)
        settings = _settings().model_copy(update={"llm": llm})
        with OpenAICompatibleClient(llm) as client:
            resources = make_resources(settings, llm=client)
            return build_with_prefect(
                PATHS, workspace, settings, resources=resources, runner=runner, quiet=True
            )

    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder, latency_s=0.02) as server:
        threads, processes = Workspace.at(tmp_path / "threads"), Workspace.at(tmp_path / "processes")
        assert llm_build(threads, "thread", server.url).ok
        server.reset()
        assert llm_build(processes, "process", server.url).ok
        assert 1 <= server.max_in_flight <= 2
        assert server.counts["chat"] > 20
    assert _digests(processes, skip=("llm_calls",)) == _digests(threads, skip=("llm_calls",))

    def calls(workspace: Workspace) -> pd.DataFrame:
        frame = read_frame(workspace, "llm_calls").drop(columns=["latency_ms"])
        return frame.sort_values(["stage", "item_id", "call_key", "attempt"]).reset_index(drop=True)

    # Each workspace has its own LLM cache: both builds sent every request, the same ones.
    pd.testing.assert_frame_equal(calls(processes), calls(threads))
