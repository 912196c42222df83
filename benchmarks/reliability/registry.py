"""The case registry of the reliability benchmark and the outcome every case returns.

A case is a function `(ctx: Context) -> Outcome`, registered under a family with `@case(family)`.
It attacks a built workspace (or a copy) through the commands a user runs and judges what came
back: handled cleanly (the documented answer: a result, or one error line and the right exit
status), a traceback on the terminal, a hang (a time limit hit), data loss (work lost while the
command reported success, or files changed that must not change), an escape (data from outside
the workspace, or an answer where a refusal was due)."""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent.parent
COLUMNS = ("cases", "handled", "tracebacks", "hangs", "data loss", "escapes")
MAXRSS = re.compile(r"^__maxrss_kb=(\d+)$", re.MULTILINE)
# Runs `nkw` and reports its peak memory on a last stderr line (removed before judging the output).
PROBE = (
    "import resource, sys\n"
    "from flows.cli.main import main\n"
    "try:\n    rc = main(sys.argv[1:])\n"
    "finally:\n"
    "    print(f'__maxrss_kb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', file=sys.stderr)\n"
    "sys.exit(rc)\n"
)


@dataclass
class Outcome:
    handled: bool
    traceback: bool = False
    hang: bool = False
    data_loss: bool = False
    escape: bool = False
    note: str = ""


@dataclass
class Run:
    rc: int | None  # None: killed at its time limit
    out: str
    err: str
    seconds: float
    maxrss_mb: float = 0.0

    @property
    def hung(self) -> bool:
        return self.rc is None

    @property
    def has_traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.out + self.err

    def one_line_error(self) -> bool:
        """A non-zero exit whose stderr is one `error: ` line."""
        lines = [line for line in self.err.strip().splitlines() if line.strip()]
        return bool(self.rc) and len(lines) == 1 and lines[0].startswith("error: ")


@dataclass
class Context:
    workspace: Path  # a built workspace: cases that may change it work on `copy_workspace()`
    scratch: Path
    env: dict[str, str] = field(default_factory=dict)
    shared: dict[str, object] = field(default_factory=dict)  # per-family resources (a running server)

    def copy_workspace(self, name: str) -> Path:
        target = self.scratch / name
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(self.workspace, target, symlinks=True)
        return target

    def nkw(self, *args: str, timeout: float = 120, cwd: Path | None = None, env: dict | None = None) -> Run:
        """`nkw ARGS` in a fresh process (its peak memory measured); rc None when it hit `timeout`."""
        started = time.monotonic()
        process = subprocess.Popen(
            [sys.executable, "-c", PROBE, *args],
            cwd=cwd or REPO,
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(timeout=timeout)
            rc: int | None = process.returncode
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, 9)
            out, err = process.communicate()
            rc = None
        found = MAXRSS.search(err)
        err = MAXRSS.sub("", err).rstrip("\n") + ("\n" if err.strip() else "")
        rss = int(found.group(1)) / 1024 if found else 0.0
        return Run(rc, out, err, time.monotonic() - started, rss)


Case = Callable[[Context], Outcome]
FAMILIES: dict[str, list[tuple[str, Case]]] = defaultdict(list)
SETUPS: dict[str, Callable[[Context], Callable[[], None] | None]] = {}


def case(family: str) -> Callable[[Case], Case]:
    """Register a case under `family` (its name is the function's)."""

    def register(function: Case) -> Case:
        FAMILIES[family].append((function.__name__, function))
        return function

    return register


def setup(family: str):
    """Register a family's set-up: `(ctx) -> teardown or None`, run once before its cases."""

    def register(function):
        SETUPS[family] = function
        return function

    return register


def judged(run: Run, *, expect_error: bool | None = None, note: str = "") -> Outcome:
    """The common verdict on one command: no traceback, no hang, and the expected kind of ending
    (True: one error line and a non-zero exit; False: exit 0; None: either)."""
    if run.hung:
        return Outcome(False, hang=True, note=note or f"no end within {run.seconds:.0f} s")
    if run.has_traceback:
        return Outcome(False, traceback=True, note=note or "traceback on the terminal")
    if expect_error is True and not run.one_line_error():
        return Outcome(False, note=note or f"expected one error line, got rc={run.rc} {run.err[-200:]!r}")
    if expect_error is False and run.rc != 0:
        return Outcome(False, note=note or f"expected success, got rc={run.rc} {run.err[-200:]!r}")
    return Outcome(True, note=note)


def run_family(family: str, ctx: Context, only: str | None = None) -> list[tuple[str, Outcome, float]]:
    """Every case of `family` (or those whose name contains `only`), each judged on its own."""
    results = []
    teardown = SETUPS[family](ctx) if family in SETUPS else None
    try:
        for name, function in FAMILIES[family]:
            if only and only not in name:
                continue
            started = time.monotonic()
            try:
                outcome = function(ctx)
            except Exception as exc:  # the harness itself failed: not handled, and said why
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                outcome = Outcome(False, note=f"case error {type(exc).__name__}: {exc} @{frame.lineno}")
            results.append((name, outcome, time.monotonic() - started))
    finally:
        if teardown is not None:
            teardown()
    return results


def scratch_dir() -> Path:
    return Path(tempfile.mkdtemp(prefix="nkw-reliability-"))


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
