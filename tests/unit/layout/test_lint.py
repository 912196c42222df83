"""The linter's rules (pyproject.toml, [tool.ruff]) hold for the whole tree: lines of at most 110
characters, no unused imports or undefined names."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "flows", "tasks", "schemas",
                             "tests", "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:]
