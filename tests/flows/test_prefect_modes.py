"""`nkw build` with Prefect as a user runs it: a server already running at the local address is used
and named in one line (no temporary server, the runs and the build's artifact land on it); without
one, the temporary server's start-up is a labelled wait with its elapsed time."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from flows.prefect_artifacts import artifact_key
from flows.prefect_server import LOCAL_SERVER_VARIABLE, WAIT_LABEL
from tasks.tables.io import Workspace
from tests.conftest import REPO, SCREENPLAY

NKW = [sys.executable, "-m", "flows.cli.main"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _env(tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PYTHONPATH=str(REPO), PREFECT_HOME=str(tmp_path / "prefect-home"), **extra)
    return env


def _build(workspace: Workspace, env: dict[str, str]) -> subprocess.CompletedProcess:
    # Off a terminal the progress is plain lines, in the order they were printed.
    return subprocess.run(
        [*NKW, "build", str(SCREENPLAY), "-w", str(workspace.root), "--embeddings", "hashing"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _wait_healthy(api: str, server: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "prefect server exited"
        try:
            with urllib.request.urlopen(f"{api}/health", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise AssertionError("prefect server did not become healthy")


@pytest.mark.slow
def test_a_running_server_at_the_local_address_is_used_and_named(tmp_path):
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    server_env = {k: v for k, v in _env(tmp_path).items() if not k.startswith("PREFECT_SERVER_SERVICES_")}
    server_env["PREFECT_HOME"] = str(tmp_path / "server-home")
    with open(tmp_path / "server.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
            env=server_env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            _wait_healthy(api, server)
            workspace = Workspace.at(tmp_path / "ws")
            done = _build(workspace, _env(tmp_path, **{LOCAL_SERVER_VARIABLE: api}))
            assert done.returncode == 0, done.stderr[-2000:]
            assert f"prefect: runs reported to the server running at {api}" in done.stderr.splitlines()
            assert WAIT_LABEL not in done.stderr
            # The build's process started no server of its own: the runs and the artifact are here.
            from prefect.client.orchestration import get_client
            from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey
            from prefect.settings import PREFECT_API_URL, temporary_settings

            key = artifact_key("build", "ws", workspace.root)
            with temporary_settings(updates={PREFECT_API_URL: api}), get_client(sync_client=True) as client:
                (artifact,) = client.read_latest_artifacts(
                    artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
                )
                run = client.read_flow_run(artifact.flow_run_id)
            assert run.state.is_completed() and "| the_lighthouse_key |" in artifact.data
        finally:
            server.terminate()
            server.wait(timeout=60)
    assert not (tmp_path / "prefect-home" / "temporary-server.log").exists()


@pytest.mark.slow
def test_the_wait_for_a_temporary_server_is_visible_and_labelled(tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    done = _build(workspace, _env(tmp_path, **{LOCAL_SERVER_VARIABLE: ""}))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    waiting = lines.index(f"[{WAIT_LABEL}]")
    ready = next(i for i, line in enumerate(lines) if line.startswith("prefect: temporary server ready in "))
    document = next(i for i, line in enumerate(lines) if line.startswith("[documents 1/1]"))
    assert waiting < ready < document  # the wait is named before the first document is done
    seconds = float(lines[ready].removeprefix("prefect: temporary server ready in ").split(" s", 1)[0])
    assert 0 < seconds < 300
