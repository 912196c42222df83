"""kill -9 at random points, two builds at once, and the Prefect server and worker processes of a
killed build."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from flows.cli.main import main
from flows.stages import STAGES
from tasks.tables import ledger
from tasks.tables.io import Workspace
from tasks.tables.lock import WriterLock
from tests.conftest import REPO, SCREENPLAY, STORY
from tests.faults.conftest import llm_config, nkw, table_contents
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder
from tests.security.conftest import snapshot

BUILD = ["--embeddings", "hashing", "--no-prefect", "-q"]
DOC = "the_lighthouse_key"


def _cmdline(pid: str) -> bytes:
    """A child's command line; empty when it exited between listing and reading (a race, not a fault)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except (FileNotFoundError, ProcessLookupError):
        return b""


def _start_build(ws: Workspace, *extra: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "flows.cli.main", "build", str(SCREENPLAY), "-w", str(ws.root), *BUILD,
         *extra],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _stages_recorded(ws: Workspace) -> int:
    try:
        return len(json.loads((ws.manifest_dir / f"{DOC}.json").read_text())["stages"])
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.slow
def test_kill_9_at_random_points_then_rebuild_equals_an_uninterrupted_build(tmp_path):
    reference = Workspace.at(tmp_path / "reference")
    assert nkw("build", str(SCREENPLAY), "-w", str(reference.root), *BUILD).returncode == 0
    expected = table_contents(reference)
    rng = random.Random(10)
    # Three builds, each killed once at a seeded random point of its progress (after k stages were
    # recorded, plus a random fraction of a second), then run again to completion.
    for attempt, k in enumerate(sorted(rng.sample(range(1, len(STAGES) - 1), 3))):
        ws = Workspace.at(tmp_path / f"killed-{attempt}")
        process = _start_build(ws)
        while _stages_recorded(ws) < k and process.poll() is None:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.3))
        process.send_signal(signal.SIGKILL)
        assert process.wait() == -signal.SIGKILL, f"the build finished before the kill after {k} stages"
        result = nkw("build", str(SCREENPLAY), "-w", str(ws.root), *BUILD)
        assert result.returncode == 0, result.stderr
        assert table_contents(ws) == expected, f"killed after {k} stages"
        files = [p for name in expected for p in ws.partition_files(name)]
        check = ledger.verify(ws.root, files)
        assert check.unknown == [] and check.altered == []
        # A write cut short can leave only a hidden temp file, never a half-written table.
        assert all(p.name.startswith(".") for p in ws.root.rglob("*.tmp"))


def test_a_second_writer_is_refused_and_changes_nothing(tmp_path, capsys):
    ws = Workspace.at(tmp_path / "ws")
    assert main(["build", str(SCREENPLAY), "-w", str(ws.root), *BUILD, "--until", "split_chunks"]) == 0
    before = snapshot(ws.root)
    with WriterLock(ws, "build"):  # another build holds the workspace
        capsys.readouterr()
        rc = main(["build", str(SCREENPLAY), "-w", str(ws.root), *BUILD, "--force", "segment_sections"])
        err = capsys.readouterr().err
        assert rc == 1 and "being written by" in err and len(err.strip().splitlines()) == 1
        other = nkw("build", str(SCREENPLAY), "-w", str(ws.root), *BUILD, "--force", "segment_sections")
        assert other.returncode == 1 and "is being written by" in other.stderr
    assert snapshot(ws.root) == before
    # The lock goes with its holder: after release (or a kill) the next build runs.
    assert main(["build", str(SCREENPLAY), "-w", str(ws.root), *BUILD, "--until", "split_chunks"]) == 0


@pytest.mark.slow
def test_a_killed_prefect_build_leaves_no_prefect_server(tmp_path):
    ws = Workspace.at(tmp_path / "ws")
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    env.update(PYTHONPATH=str(REPO), PREFECT_HOME=str(tmp_path / "prefect"))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "flows.cli.main",
            "build",
            str(SCREENPLAY),
            "-w",
            str(ws.root),
            "--embeddings",
            "hashing",
            "-q",
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    server = None
    deadline = time.monotonic() + 240
    while server is None and time.monotonic() < deadline and process.poll() is None:
        children = subprocess.run(
            ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
        ).stdout.split()
        for pid in children:
            if b"uvicorn" in _cmdline(pid):
                server = int(pid)
        time.sleep(0.2)
    assert server is not None, "the build should have started a temporary Prefect server"
    process.send_signal(signal.SIGKILL)
    process.wait()
    for _ in range(100):
        if not os.path.exists(f"/proc/{server}") or _is_zombie(server):
            break
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{server}") or _is_zombie(server)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ", 1)[1].startswith("Z")
    except OSError:
        return True


@pytest.mark.slow
def test_worker_processes_do_not_outlive_a_killed_build(tmp_path):
    # Workers of `--runner process` exit with the build: a later build that takes over the stale
    # writer lock must not find one still writing.
    ws = Workspace.at(tmp_path / "ws")
    config = llm_config(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "PREFECT_API_URL"}
    env.update(
        PYTHONPATH=str(REPO), PREFECT_HOME=str(tmp_path / "prefect"), NKW_API_KEY="", OPENAI_API_KEY=""
    )
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder, latency_s=0.3) as server:
        process = subprocess.Popen(
            [sys.executable, "-m", "flows.cli.main", "build", str(SCREENPLAY), str(STORY), "-w", str(ws.root)]
            + ["--embeddings", "hashing", "-q", "--runner", "process", "--concurrency", "2"]
            + ["--config", str(config), "--llm-url", server.url, "--model", TEST_MODEL],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        workers: set[int] = set()
        deadline = time.monotonic() + 240
        while len(workers) < 2 and time.monotonic() < deadline and process.poll() is None:
            for pid in subprocess.run(
                ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
            ).stdout.split():
                if b"spawn_main" in _cmdline(pid):  # not the resource tracker
                    workers.add(int(pid))
            time.sleep(0.2)
        while server.counts["chat"] < 3 and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.1)  # the workers are building: LLM requests arrive
        assert len(workers) == 2 and process.poll() is None, "the build should have two workers mid-build"
        process.send_signal(signal.SIGKILL)
        process.wait()
        for _ in range(100):
            if all(not os.path.exists(f"/proc/{pid}") or _is_zombie(pid) for pid in workers):
                break
            time.sleep(0.1)
    assert all(not os.path.exists(f"/proc/{pid}") or _is_zombie(pid) for pid in workers)
