"""The deployment flow takes the offline-fallback choice, and its advice names the deployment's
parameter rather than a command-line flag that a deployment run cannot take."""

from __future__ import annotations

import socket

import pytest

from flows.build_corpus import build_corpus
from tasks.llm.client.preflight import LLMUnavailable
from tasks.tables.io import Workspace, read_frame
from tasks.tables.manifest import load_manifest
from tests.conftest import SCREENPLAY


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there once the socket is closed


@pytest.fixture()
def hashing_config(tmp_path):
    config = tmp_path / "hashing.toml"
    config.write_text('[embed_texts]\nbackend = "hashing"\n\n[llm]\ntimeout_s = 2.0\nmax_retries = 0\n')
    return str(config)


def test_a_deployment_run_without_a_server_advises_its_own_parameter(tmp_path, hashing_config):
    with pytest.raises(LLMUnavailable) as raised:
        build_corpus.fn(
            paths=[str(SCREENPLAY)],
            workspace=str(tmp_path / "ws"),
            config=hashing_config,
            llm_url=_closed_port_url(),
            model="absent-model",
        )
    message = str(raised.value)
    assert "allow_offline_fallback=true" in message and "--allow-offline-fallback" not in message


def test_a_deployment_run_with_the_fallback_builds_offline(tmp_path, hashing_config, prefect_harness):
    summary = build_corpus.fn(
        paths=[str(SCREENPLAY)],
        workspace=str(tmp_path / "ws"),
        config=hashing_config,
        llm_url=_closed_port_url(),
        model="absent-model",
        allow_offline_fallback=True,
    )
    assert summary["documents"] == 1 and summary["built"] > 0 and summary["failed"] == 0, summary
    ws = Workspace.at(tmp_path / "ws")
    assert len(read_frame(ws, "entities")) > 0
    doc_id = read_frame(ws, "documents")["doc_id"].iloc[0]
    assert load_manifest(ws, doc_id).stages["extract_graph"].details["backend"] == "heuristic"
