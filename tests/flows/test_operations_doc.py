"""docs/operations.md's Prefect sequence (server, work pool, deploy, worker, run) works exactly as
printed: the block is read from the document and run by bash in a copy of the repository."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tasks.tables.io import Workspace, read_frame
from tests.conftest import REPO

MARKER = "<!-- operations: prefect sequence -->"
COPIED = ("flows", "tasks", "schemas", "deployments", "pyproject.toml", "data/samples")


def documented_sequence(text: str) -> str:
    """The bash block right after the marker in docs/operations.md."""
    found = re.search(re.escape(MARKER) + r"\s*```bash\n(.*?)```", text, re.S)
    assert found, "docs/operations.md has no marked Prefect sequence"
    return found.group(1)


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _stop_group(group: int) -> None:
    """Stop the server and worker the block left in the background (the worker may ignore SIGTERM
    while it shuts down, so SIGKILL follows)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(group, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except ProcessLookupError:
                return
            time.sleep(0.5)


@pytest.mark.slow
def test_the_documented_prefect_sequence_runs_as_printed(tmp_path):
    sequence = documented_sequence((REPO / "docs" / "operations.md").read_text(encoding="utf-8"))
    port = int(re.search(r"--port (\d+)", sequence).group(1))
    assert _port_is_free(port), f"port {port} is taken: stop the Prefect server that holds it"
    repo = tmp_path / "repo"
    for name in COPIED:
        source, target = REPO / name, repo / name
        if source.is_dir():
            shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    venv_bin = str(Path(sys.executable).parent)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")},
        "PATH": venv_bin + os.pathsep + os.environ.get("PATH", ""),
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_UI_ENABLED": "false",
        "DO_NOT_TRACK": "1",
        "PYTHONPATH": str(repo),
    }
    # Only shell options and the clean-up of the background jobs are added around the block.
    script = "set -euo pipefail\n" + sequence
    shell = subprocess.Popen(
        ["bash", "-c", script],
        cwd=repo,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = shell.communicate(timeout=1500)
    finally:
        _stop_group(shell.pid)
    worker_log = (repo / "prefect-worker.log").read_text(errors="replace")[-3000:]
    assert shell.returncode == 0, output[-3000:] + "\n--- worker ---\n" + worker_log
    assert "Completed" in output, output[-3000:]
    workspace = Workspace.at(repo / "data" / "workspaces" / "corpus")
    documents = read_frame(workspace, "documents")
    assert sorted(documents["doc_id"]) == ["the_fisherman_and_his_wife", "the_lighthouse_key"]
    assert set(read_frame(workspace, "entities")["doc_id"]) == set(documents["doc_id"])
