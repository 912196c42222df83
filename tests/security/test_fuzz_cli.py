"""Fuzz pass: every `nkw` command, in a fresh process, with seeded hostile arguments, config files
and damaged workspaces. Whatever it is fed, a command ends without a traceback, within its time
limit, with a documented exit status (0, 1, 2; 130 only after Ctrl-C), prints no control bytes a
terminal obeys, and writes nothing through a link. A failure prints each case's command line, config
and damage, so `NKW_FUZZ_SEED=<seed>` reruns it; the seed and case counts are fixed so the pass is
bounded (about 3-4 minutes on two cores)."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import REPO, SAMPLES
from tests.security.fuzz_kit import argv_case, config_case, workspace_case
from tests.security.fuzz_run import environment, run_case

pytestmark = pytest.mark.slow

SEED = int(os.environ.get("NKW_FUZZ_SEED", "46"))
CASES = {"argv": 120, "config": 30, "workspace": 40}
WORKERS = 2  # the machine has two cores; each case is one process


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The tiny workspace every case copies: one sample built, and one evaluation run."""
    root = tmp_path_factory.mktemp("fuzz-base")
    ws = root / "ws"
    home = root / "home"
    home.mkdir()
    sample, questions = SAMPLES / "the_lighthouse_key.txt", SAMPLES / "the_lighthouse_key.questions.jsonl"
    fast = ["--embeddings", "hashing", "--no-prefect", "-q"]
    for argv in (
        ["build", str(sample), "-w", str(ws), *fast],
        ["eval", "-w", str(ws), "--questions", str(questions), "--limit", "2", *fast],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "flows.cli.main", *argv],
            cwd=REPO,
            env=environment(root),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
    return ws


def workspace_files(ws: Path) -> list[str]:
    return sorted(str(p.relative_to(ws)) for p in ws.rglob("*") if p.is_file())


def cases(family: str, files: list[str]) -> list:
    rng = random.Random(f"{SEED}-{family}")
    make = {"argv": argv_case, "config": config_case, "workspace": lambda r, n: workspace_case(r, n, files)}[
        family
    ]
    offset = {"argv": 0, "config": 300, "workspace": 600}[family]
    return [make(rng, offset + i) for i in range(CASES[family])]


@pytest.mark.parametrize("family", list(CASES))
def test_no_command_breaks_a_promise_under_fuzz(family, base, tmp_path):
    generated = cases(family, workspace_files(base))
    with ThreadPoolExecutor(WORKERS) as pool:
        found = [
            p
            for problems in pool.map(lambda c: run_case(c, tmp_path, base, SEED), generated)
            for p in problems
        ]
    assert found == [], f"seed {SEED}: {len(found)} broken promise(s)\n" + "\n".join(found)
