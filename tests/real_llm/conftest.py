"""The real-model check (`make check-llm`): a GGUF model served by llama.cpp on 127.0.0.1.

Collected only when NKW_REAL_LLM_MODEL names the GGUF file (`nkw llm fetch` prints it); `make
test` leaves the folder out. Every phase's wall time is printed at the end of the run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from schemas.config import load_settings
from tasks.llm.local.model_files import resolve_model
from tasks.llm.local.server import LocalServer, ServerOptions, free_port
from tests.real_llm.timing import TIMINGS

REPO = Path(__file__).resolve().parents[2]
CONFIG = Path(__file__).with_name("check_llm.toml")
FIXTURES = REPO / "tests" / "fixtures" / "real_llm"
SCREENPLAY = FIXTURES / "the_ferry_ticket.txt"
QUESTIONS = FIXTURES / "the_ferry_ticket.questions.jsonl"


def pytest_terminal_summary(terminalreporter) -> None:
    for phase, seconds in TIMINGS.items():
        terminalreporter.write_line(f"check-llm wall time: {phase} {seconds:.1f} s")


@pytest.fixture(scope="session")
def local_server():
    """The local server with the check's settings, stopped when the session ends."""
    spec = os.environ.get("NKW_REAL_LLM_MODEL")
    if not spec:
        pytest.fail("NKW_REAL_LLM_MODEL must name a GGUF file (make check-llm sets it from `nkw llm fetch`)")
    settings = load_settings(CONFIG).local_llm
    model = resolve_model(spec, Path("unused-cache"), log=lambda _: None)  # a path: no fetch, no cache
    options = ServerOptions(
        model_path=str(model.path), alias=model.alias, context=settings.context, parallel=settings.parallel,
        decode_threads=settings.decode_threads, prompt_threads=settings.prompt_threads, port=free_port(),
    )  # fmt: skip
    started = time.monotonic()
    with LocalServer(options, settings.startup_timeout_s) as server:
        TIMINGS["server start"] = time.monotonic() - started
        yield server


def nkw(phase: str, *args: str) -> subprocess.CompletedProcess:
    """`nkw ARGS` as a user runs it, timed under `phase`."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    TIMINGS[phase] = time.monotonic() - started
    return done
