"""LLM outages are never success: a server that is down stops the build with one line (or,
when allowed, falls back to the heuristics, labelled); items lost mid-build make the stage
`partial` and the exit status non-zero; the next build retries exactly those items."""

from __future__ import annotations

import json
import socket

import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace, read_frame
from tasks.tables.manifest import load_manifest
from tests.conftest import SCREENPLAY
from tests.faults.conftest import llm_config, table_contents
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

DOC = "the_lighthouse_key"
UNTIL = "extract_narrative"  # ingest .. the first two LLM stages: enough to lose and recover items
LLM_STAGES = ("extract_graph", "canonicalize_entities", "extract_narrative")


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


def _build(ws: Workspace, url: str, config, capsys, *extra: str) -> tuple[int, str, str]:
    rc = main(
        [
            "build",
            str(SCREENPLAY),
            "-w",
            str(ws.root),
            "--embeddings",
            "hashing",
            "--no-prefect",
            "--llm-url",
            url,
            "--model",
            TEST_MODEL,
            "--config",
            str(config),
            "--until",
            UNTIL,
            *extra,
        ]
    )
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _statuses(ws: Workspace) -> dict[str, str]:
    return {name: record.status for name, record in load_manifest(ws, DOC).stages.items()}


@pytest.fixture(scope="module")
def clean_build(tmp_path_factory):
    """The fault-free build every recovered build must equal."""
    root = tmp_path_factory.mktemp("clean")
    ws = Workspace.at(root / "ws")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        rc = main(
            [
                "build",
                str(SCREENPLAY),
                "-w",
                str(ws.root),
                "--embeddings",
                "hashing",
                "--no-prefect",
                "-q",
                "--llm-url",
                server.url,
                "--model",
                TEST_MODEL,
                "--config",
                str(llm_config(root)),
                "--until",
                UNTIL,
            ]
        )
    assert rc == 0
    return table_contents(ws)


def test_server_down_is_one_clear_error_and_builds_nothing(tmp_path, capsys):
    ws = Workspace.at(tmp_path / "ws")
    rc, out, err = _build(ws, _closed_port_url(), llm_config(tmp_path), capsys)
    assert rc == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "not reachable" in err and "--allow-offline-fallback" in err
    assert _statuses(ws) == {}  # nothing recorded as built, so nothing is mistaken for up to date


def test_offline_fallback_is_labelled_and_rebuilt_when_the_server_is_back(tmp_path, capsys, clean_build):
    ws, config = Workspace.at(tmp_path / "ws"), llm_config(tmp_path)
    rc, out, _ = _build(ws, _closed_port_url(), config, capsys, "--allow-offline-fallback")
    assert rc == 0 and "OFFLINE HEURISTICS" in out
    manifest = load_manifest(ws, DOC)
    assert {manifest.stages[s].details["backend"] for s in LLM_STAGES} == {"heuristic"}
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        rc, out, _ = _build(ws, server.url, config, capsys)
        assert (
            rc == 0 and len(server.chat_requests()) > 0
        )  # the heuristic stages are not "up to date" for the LLM
    assert {load_manifest(ws, DOC).stages[s].details["backend"].startswith("llm:") for s in LLM_STAGES} == {
        True
    }
    assert table_contents(ws) == clean_build


def test_a_server_that_dies_mid_build_makes_stages_partial_and_the_next_build_recovers(
    tmp_path, capsys, clean_build
):
    ws, config = Workspace.at(tmp_path / "ws"), llm_config(tmp_path)
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        server.set_fault_rate(1.0, kinds=("http_500",))  # up for the preflight, then every chat request fails
        rc, out, err = _build(ws, server.url, config, capsys)
        assert rc == 1 and "INCOMPLETE:" in out and "retry exactly those items" in out
        statuses = _statuses(ws)
        # extract_narrative sends nothing of its own: it reads the units the combined requests stored
        assert statuses["extract_graph"] == "partial" and statuses["extract_narrative"] == "built"
        failures = read_frame(ws, "failures")
        lost = failures[failures["error"].str.startswith("llm error:")]
        chunks = set(read_frame(ws, "chunks")["chunk_id"])
        assert (
            set(lost.loc[lost["stage"] == "extract_graph", "item_id"]) == chunks
        )  # every item is accounted for
        assert main(["inspect", "-w", str(ws.root)]) == 0
        assert "partial" in capsys.readouterr().out
        report = json.loads(_inspect_json(ws, capsys))
        assert report["stages"]["extract_graph"]["partial"] == 1

        server.set_fault_rate(0.0)
        rc, out, _ = _build(ws, server.url, config, capsys)
        assert rc == 0 and "INCOMPLETE" not in out
    calls = read_frame(ws, "llm_calls")
    graph = calls[calls["stage"] == "extract_graph"]
    assert set(graph.loc[graph["status"] == "ok", "item_id"]) == chunks  # every lost item was asked again
    assert set(_statuses(ws).values()) == {"built"}
    assert table_contents(ws) == clean_build


def test_twenty_percent_faults_lose_nothing_and_retry_failed_asks_exactly_the_lost_items(
    tmp_path, capsys, clean_build
):
    ws = Workspace.at(tmp_path / "ws")
    config = tmp_path / "llm.toml"
    config.write_text(
        llm_config(tmp_path)
        .read_text()
        .replace("max_retries = 1", "max_retries = 0")
        .replace("timeout_s = 2.0", "timeout_s = 1.0")
    )
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        server.set_fault_rate(0.2, kinds=("http_500", "hang"))  # no retries: a fault loses its item
        # The rate draws by a hash of each request's body: the first request (an extraction) fails
        # too, so some item is lost whatever the bodies hash to.
        server.queue_faults("http_500")
        rc, out, _ = _build(ws, server.url, config, capsys)
        failures = read_frame(ws, "failures")
        lost = failures[failures["error"].str.startswith(("llm error:", "llm timeout:"))]
        graph_lost = set(lost.loc[lost["stage"] == "extract_graph", "item_id"])
        assert graph_lost and rc == 1 and "INCOMPLETE:" in out
        assert _statuses(ws)["extract_graph"] == "partial"
        calls = read_frame(ws, "llm_calls")
        for stage in ("extract_graph", "extract_narrative"):  # nothing vanished: an answer or a failures row
            items = set(calls.loc[calls["stage"] == stage, "item_id"])
            answered = set(
                calls.loc[(calls["stage"] == stage) & calls["status"].isin(["ok", "cached"]), "item_id"]
            )
            assert items == answered | set(failures.loc[failures["stage"] == stage, "item_id"]), stage

        server.set_fault_rate(0.0)
        rc = main(
            [
                "build",
                "-w",
                str(ws.root),
                "--retry-failed",
                "--embeddings",
                "hashing",
                "--no-prefect",
                "-q",
                "--llm-url",
                server.url,
                "--model",
                TEST_MODEL,
                "--config",
                str(config),
                "--until",
                UNTIL,
            ]
        )
        capsys.readouterr()
        assert rc == 0
    calls = read_frame(ws, "llm_calls")
    graph = calls[calls["stage"] == "extract_graph"]
    assert set(graph.loc[graph["status"] != "cached", "item_id"]) == graph_lost  # exactly the lost items
    assert set(_statuses(ws).values()) == {"built"}
    assert table_contents(ws) == clean_build
    assert main(["build", "-w", str(ws.root), "--retry-failed"]) == 0
    assert "nothing to retry" in capsys.readouterr().out


def test_force_reruns_one_stage(tmp_path, capsys, hashing_settings):
    ws = Workspace.at(tmp_path / "ws")
    args = [
        "build",
        str(SCREENPLAY),
        "-w",
        str(ws.root),
        "--embeddings",
        "hashing",
        "--no-prefect",
        "--json",
        "--until",
        "split_chunks",
    ]
    assert main(args) == 0
    capsys.readouterr()
    assert main([*args, "--force", "segment_sections"]) == 0
    report = json.loads(capsys.readouterr().out)
    ran = {s["stage"]: s["status"] for s in report["documents"][0]["stages"]}
    assert ran["segment_sections"] == "built" and ran["ingest_documents"] == "skipped"
    assert main([*args, "--force", "no_such_stage"]) == 2
    assert "unknown stage(s) for --force" in capsys.readouterr().err


def _inspect_json(ws: Workspace, capsys) -> str:
    assert main(["inspect", "-w", str(ws.root), "--json"]) == 0
    return capsys.readouterr().out
