"""Helpers of the fault suite: run `nkw` as a user would (in-process or as a subprocess),
a fast LLM configuration for the test server, and table contents to compare builds by."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa

from schemas.tables import TABLES
from tasks.tables.io import Workspace, read_table
from tests.conftest import REPO

# Few retries and no backoff: an outage shows up in milliseconds, not minutes.
FAST_LLM = """[llm]
timeout_s = 2.0
deadline_s = 6.0
max_retries = 1
backoff_s = 0.0
concurrency = 4
max_tokens = 256
max_tokens_retry = 512

[extract_graph]
pack_tokens = 0  # one request per chunk, so lost items can be checked chunk by chunk
combined_pack_tokens = 0  # the same for the combined requests (the default)
"""


def llm_config(tmp_path: Path) -> Path:
    path = tmp_path / "llm.toml"
    path.write_text(FAST_LLM)
    return path


def nkw(*args: str, timeout: float = 600, **popen) -> subprocess.CompletedProcess:
    """`nkw ARGS` in a fresh process, from the repository root."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NKW_API_KEY": "", "OPENAI_API_KEY": ""}
    return subprocess.run(
        [sys.executable, "-m", "flows.cli.main", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        **popen,
    )


def table_contents(workspace: Workspace, skip: tuple[str, ...] = ("llm_calls",)) -> dict[str, list]:
    """Every table's rows, sorted, for comparing two builds (llm_calls hold latencies, so are skipped)."""
    contents = {}
    for name in TABLES:
        if name in skip:
            continue
        table: pa.Table = read_table(workspace, name)
        contents[name] = sorted(repr(sorted(row.items())) for row in table.to_pylist())
    return contents
