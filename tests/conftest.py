"""Shared fixtures: isolated Prefect home, small workspaces built from the bundled samples."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.tiers import is_slow

# Fixture modules shared by every test module that needs them (the fake LLM server, the agent).
pytest_plugins = ("tests.fixtures.llm_fixtures", "tests.fixtures.agent_fixtures")

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "data" / "samples"
SCREENPLAY = SAMPLES / "the_lighthouse_key.txt"
STORY = SAMPLES / "the_fisherman_and_his_wife.txt"
# The real-model check (minutes of CPU inference) runs only through `make check-llm`, which names
# the model file; a plain `pytest tests` leaves it out.
collect_ignore = [] if os.environ.get("NKW_REAL_LLM_MODEL") else ["real_llm"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The slow tier is declared in one place (tests/tiers.py); `make test` deselects it with -m.
    for item in items:
        if is_slow(item.nodeid):
            item.add_marker(pytest.mark.slow)


def pytest_configure(config: pytest.Config) -> None:
    # Prefect must never touch the user's home or phone home during tests.
    home = REPO / ".pytest_cache" / "prefect-home"
    home.mkdir(parents=True, exist_ok=True)
    os.environ["PREFECT_HOME"] = str(home)
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"
    os.environ["PREFECT_UI_ENABLED"] = "false"
    os.environ["PREFECT_LOGGING_LEVEL"] = "WARNING"
    os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "180"
    # Nor report to a server someone left running at Prefect's default local address: a test that
    # wants a running server names its own (flows.prefect_server).
    os.environ["NKW_PREFECT_LOCAL_URL"] = ""


@pytest.fixture(scope="session")
def prefect_harness():
    """One Prefect test server for the whole session (15-20 s once)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=180):
        yield


@pytest.fixture(scope="module", autouse=True)
def close_prefect_events_socket():
    """After a module that ran flows, stop Prefect's events worker: its idle websocket draws keepalive
    pings from the global `random` module, and a ping landing inside a Hypothesis draw of a later
    module was reported as that test's strategy using `random`. The next flow starts a new worker."""
    yield
    worker = sys.modules.get("prefect.events.worker")
    if worker is not None and worker.EventsWorker._instances:
        worker.EventsWorker.drain_all(timeout=10)


@pytest.fixture()
def hashing_settings():
    """Settings with the model-free embedder: fast and deterministic."""
    from schemas.config import load_settings

    return load_settings(overrides={"embed_texts": {"backend": "hashing"}})


@pytest.fixture(scope="session")
def sample_workspace(tmp_path_factory):
    """The two bundled samples built once (hashing embeddings, no Prefect) for read-only tests."""
    from flows.build.corpus import build
    from schemas.config import load_settings
    from tasks.tables.io import Workspace

    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    workspace = Workspace.at(tmp_path_factory.mktemp("samples") / "ws")
    report = build([str(SCREENPLAY), str(STORY)], workspace, settings, quiet=True)
    assert report.ok, report.summary()
    return workspace


@pytest.fixture(scope="session")
def screenplay_env(sample_workspace):
    """The query-time tools over the bundled screenplay (hashing embeddings), read-only."""
    from tasks.embeddings import HashingEmbedder
    from tasks.query.store.document_store import NarrativeStore
    from tasks.query.tools.env import ToolEnv

    return ToolEnv(NarrativeStore.load(sample_workspace, "the_lighthouse_key"), HashingEmbedder(384).embed)
