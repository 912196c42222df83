"""Checks on the shared benchmark development sets (`make check-dev`); they need the shared
data folder, given by NKW_SHARED_DATA (default: ../shared/data beside the clone)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

SHARED = Path(os.environ.get("NKW_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()
BENCHMARKS = ("stage", "fairytaleqa", "quality")


def nkw(*args: str, timeout: int = 1800) -> tuple[subprocess.CompletedProcess, float]:
    """Run the installed `nkw` command; returns the process and its wall time."""
    started = time.perf_counter()
    process = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout,
    )
    return process, time.perf_counter() - started


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not (SHARED / "stage" / "documents.jsonl").is_file():
        pytest.fail(f"shared benchmark data not found at {SHARED} (set NKW_SHARED_DATA)")
    return SHARED


@pytest.fixture(scope="session")
def dev_workspace(tmp_path_factory, shared_data) -> tuple[Path, dict[str, float]]:
    """All three dev sets built once with the default settings (MiniLM embeddings)."""
    workspace = tmp_path_factory.mktemp("dev") / "ws"
    timings = {}
    for name in BENCHMARKS:
        process, seconds = nkw(
            "build", str(shared_data / name / "documents.jsonl"), "--workspace", str(workspace), "--quiet"
        )
        assert process.returncode == 0, process.stderr[-2000:] + process.stdout[-2000:]
        timings[name] = seconds
    return workspace, timings
