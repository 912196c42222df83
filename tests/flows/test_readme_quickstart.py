"""README's "Your own file in five commands" works exactly as printed, in a fresh folder that holds
only the bundled samples and the virtualenv."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.unit.docs.test_docs import shell_blocks

SECTION = "## Your own file in five commands"


def quickstart_block(readme: str) -> str:
    section = readme.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return shell_blocks(section)[0]


@pytest.mark.slow
def test_the_readme_quickstart_runs_as_printed(tmp_path):
    block = quickstart_block((REPO / "README.md").read_text(encoding="utf-8"))
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "samples").symlink_to(REPO / "data" / "samples")
    (tmp_path / ".venv").symlink_to(Path(sys.prefix))
    env = {**os.environ, "PREFECT_HOME": str(tmp_path / "prefect"), "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + block],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1200,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    out = done.stdout
    assert re.search(r"1 document\(s\): \d+ stage runs built, 0 partial, 0 skipped, 0 failed", out), out
    assert "offline" in out and "INT./EXT. VAN" in out  # the answer is labelled and cites the van scene
    assert "(5 rows)" in out
    assert (tmp_path / "view" / "the_lighthouse_key.html").stat().st_size > 10_000
