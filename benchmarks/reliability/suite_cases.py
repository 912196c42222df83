"""Families whose attacks live as pytest suites (inputs, workspace damage, interruptions, config
files, output folders, terminal safety, workspace special files, sql values, doc promises): the
family's set-up runs the suite once and each test becomes one case, judged from pytest's verdict.
These suites make their own small documents rather than attack the shared workspace. A failed test
counts as a traceback or a hang when its report says so, else as not handled."""

from __future__ import annotations

import re
import subprocess
import sys

from benchmarks.reliability.registry import FAMILIES, REPO, Context, Outcome, setup

SUITES = {
    "inputs": "tests/faults/test_attack_inputs.py",
    "workspace": "tests/faults/test_attack_workspace.py",
    "interruptions": "tests/faults/test_attack_interruptions.py",
    "config": "tests/faults/test_attack_config.py",
    "outputs": "tests/security/test_attack_output_folders.py",
    "terminal": "tests/security/test_attack_terminal.py",
    "special_files": "tests/faults/test_attack_special_files.py",
    "sql_values": "tests/security/test_sql_printable.py",
    "promises": "tests/faults/test_attack_promises.py",
}
RESULT = re.compile(r"^(PASSED|FAILED|ERROR) \S+?::(\S+)(?: - (.*))?$", re.MULTILINE)


def _verdict(verdict: str, message: str) -> Outcome:
    if verdict == "PASSED":
        return Outcome(True)
    return Outcome(False, traceback="Traceback" in message, hang="Hang" in message, note=message[:150])


def _suite_family(family: str, path: str) -> None:
    FAMILIES.setdefault(family, [])

    def run_suite(ctx: Context):
        """Run the suite, then register one case per test (the family's cases are read after set-up)."""
        if not (REPO / path).exists():
            return None  # this checkout has no such suite: no cases
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", path],
            cwd=REPO,
            env=ctx.env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        for verdict, name, message in RESULT.findall(done.stdout):
            outcome = _verdict(verdict, message or "")
            FAMILIES[family].append((name, lambda _ctx, outcome=outcome: outcome))
        return None

    setup(family)(run_suite)


for _family, _path in SUITES.items():
    _suite_family(_family, _path)
