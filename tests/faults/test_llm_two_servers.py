"""A build across two servers of one model (`--llm-url` twice), one of them stopped mid-build: both
servers answer, the stopped one's documents move to the other, nothing is lost or asked twice, the
build exits 0, and every table's rows equal those of the same documents built through one server.

Compared: every table but `llm_calls`, which records each attempt with its latency, the error of
the stopped server and the attempt that moved, so two builds' call logs differ by design (only
their answered requests are compared). Manifests hold the build's clock and are not tables; no
table row holds a clock or a run id (STYLE 6), so nothing else is left out."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from flows.cli.main import main
from tasks.llm.client.http import api_base
from tasks.llm.client.routing import rendezvous_order
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SAMPLES
from tests.faults.conftest import llm_config, table_contents
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
DOCUMENTS = [
    SAMPLES / "the_lighthouse_key.txt",
    SAMPLES / "the_fisherman_and_his_wife.txt",
    FIXTURES / "real_llm" / "the_ferry_ticket.txt",
    FIXTURES / "screenplays" / "en_harbour_ledger.txt",
    FIXTURES / "screenplays" / "en_irregular.txt",
    FIXTURES / "screenplays" / "en_shooting_script.txt",
    FIXTURES / "screenplays" / "en_stage_style.txt",
]
# Chat requests the stopped server answers before it stops. It serves at least four of the seven
# documents, which ask at least 56 requests together (13 to 56 each): a good part of the build is
# behind it and at least 16 of its requests are still to come, more than are ever in flight.
STOP_AFTER = 40


def _build(workspace: Workspace, urls: list[str], config: Path) -> int:
    llm = [arg for url in urls for arg in ("--llm-url", url)]
    return main(
        [
            "build", *map(str, DOCUMENTS), "-w", str(workspace.root), "--embeddings", "hashing",
            "--no-prefect", "-q", *llm, "--model", TEST_MODEL, "--config", str(config),
        ]
    )  # fmt: skip


def _stop_after(server: FakeOpenAIServer, requests: int) -> threading.Thread:
    """Stop `server` once it has had `requests` chat requests (from a thread of our own: a handler
    cannot shut down the server it runs in)."""

    def watch() -> None:
        while server.counts["chat"] < requests and not server._stopping.is_set():
            time.sleep(0.005)
        server.stop()

    watcher = threading.Thread(target=watch, name="stop-server", daemon=True)
    watcher.start()
    return watcher


def _answered(workspace: Workspace) -> pd.Series:
    calls = read_frame(workspace, "llm_calls")
    return calls.loc[calls["status"].isin(["ok", "salvaged"]), "call_key"]


@pytest.fixture(scope="module")
def one_server(tmp_path_factory):
    root = tmp_path_factory.mktemp("one-server")
    workspace = Workspace.at(root / "ws")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        assert _build(workspace, [server.url], llm_config(root)) == 0
    return workspace


def test_two_servers_one_stopped_mid_build_give_the_one_server_rows(one_server, tmp_path):
    a = FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder).start()
    b = FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder).start()
    urls = [a.url, b.url]
    # The server most documents go to is stopped, whatever ports the two got: its documents move.
    first = [rendezvous_order(path.stem, [api_base(u) for u in urls])[0] for path in DOCUMENTS]
    stopped, kept = (a, b) if first.count(0) >= first.count(1) else (b, a)
    workspace = Workspace.at(tmp_path / "ws")
    try:
        watcher = _stop_after(stopped, STOP_AFTER)
        code = _build(workspace, urls, llm_config(tmp_path))
        watcher.join(timeout=5)
    finally:
        a.stop()
        b.stop()
    assert code == 0
    assert stopped.counts["chat"] >= STOP_AFTER and kept.counts["chat"] > 0  # both answered
    calls = read_frame(workspace, "llm_calls")
    assert calls["status"].isin(["error", "timeout"]).any()  # requests met the stopped server and moved
    assert read_frame(workspace, "failures").empty
    answered = _answered(workspace)
    assert answered.is_unique  # no request answered twice
    assert sorted(answered) == sorted(_answered(one_server))  # the same requests, each answered once
    ours, theirs = table_contents(workspace), table_contents(one_server)
    assert [name for name in ours if ours[name] != theirs[name]] == []
    assert ours["entities"] and ours["episodes"]  # rows were compared, not two empty builds
