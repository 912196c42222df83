"""Attack family "start-up interrupts": Ctrl-C (SIGINT) sent to a real `nkw` process at several
moments of its first second and a half — inside the CLI's imports, while parsing, while the
command's module loads, once the command runs — for several commands. Every one ends with the
one line `interrupted` and exit 130, never a traceback (flows/cli/interrupts.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.conftest import REPO, SCREENPLAY
from tests.faults.attack_kit import FAST, nkw_in_process

QUESTIONS = SCREENPLAY.with_name("the_lighthouse_key.questions.jsonl")
QUICK_DELAYS = (0.0, 0.3, 0.8)  # seconds after the project's first import
ALL_DELAYS = (0.0, 0.05, 0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5)
READ_ONLY = ("sql", "inspect")  # one printed result, nothing written: done before the signal is fine


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("startup") / "ws"
    from flows.cli.main import main

    assert main(["build", str(SCREENPLAY), "-w", str(root), *FAST]) == 0
    return root


def _commands(ws: Path, port: int) -> dict[str, list[str]]:
    return {
        "eval": ["eval", "-w", str(ws), "--questions", str(QUESTIONS), "--embeddings", "hashing", "-q"],
        "build": ["build", str(SCREENPLAY), "-w", str(ws.parent / "fresh"), "--embeddings", "hashing", "-q"],
        "sql": ["sql", "-w", str(ws), "SELECT count(*) FROM chunks"],
        "ask": ["ask", "-w", str(ws), "Who hides the brass key?", "--embeddings", "hashing"],
        "inspect": ["inspect", "-w", str(ws)],
        "serve": ["serve", "-w", str(ws), "--port", str(port), "--embeddings", "hashing"],
        "llm check": ["llm", "check", "--llm-url", f"http://127.0.0.1:{port}/v1", "--model", "m"],
    }


def _interrupted_at(
    args: list[str], delay: float, cwd: Path, sig: int = signal.SIGINT
) -> tuple[int | None, str, bool, str]:
    """(exit status, stderr, whether the process was still running when `sig` was sent, stdout).

    The delay counts from the moment the project's first package has been imported: before it the
    interpreter is still in its own start-up (the `site` imports), which no project code can guard
    (docs/reliability.md), and on a busy machine that window alone outlasts 0.2 s. `-X importtime`
    reports each import as it completes, so the test sees that moment without a hook in the code."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NKW_API_KEY": "", "OPENAI_API_KEY": ""}
    process = subprocess.Popen(
        [sys.executable, "-X", "importtime", "-m", "flows.cli.main", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,  # small: a count, a summary line (read once the process has ended)
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    started = threading.Event()

    def read() -> None:
        for line in process.stderr:
            lines.append(line)
            if line.startswith("import time:") and line.rsplit("|", 1)[-1].strip() == "flows":
                started.set()
        started.set()  # the stream ended: the process is gone

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started.wait(timeout=60)
    time.sleep(delay)
    alive = process.poll() is None
    if alive:
        process.send_signal(sig)
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:  # an interrupt that did not end it: a hang
        process.kill()
        process.wait()
        reader.join(timeout=10)
        return None, _without_import_times(lines), alive, process.stdout.read()
    reader.join(timeout=10)
    return process.returncode, _without_import_times(lines), alive, process.stdout.read()


def _without_import_times(lines: list[str]) -> str:
    return "".join(line for line in lines if not line.startswith("import time:"))


def _check(
    runs: list[tuple[str, float, tuple[int | None, str, bool, str]]], sig: int = signal.SIGINT
) -> None:
    interrupted = 0
    for name, delay, (code, err, alive, out) in runs:
        where = f"{name} at {delay} s"
        assert "Traceback" not in err and "Exception ignored" not in err, (where, err[-3000:])
        assert code is not None, f"{where}: still running a minute after Ctrl-C"
        if code == -sig:
            # The command had ended and the interpreter, finalizing, had restored the default
            # disposition: the kernel ended it, as a shell's 130 — its work done, and what it printed
            # is its own result (`llm check` against a closed port has printed its one error line).
            said = [line for line in err.splitlines() if line.strip()]
            assert alive and all(line.startswith(("error:", "warning:", "notice:")) for line in said), (
                where,
                err[-1000:],
            )
        elif alive and code == 0 and name in READ_ONLY and out.strip():
            # A read-only command this small can finish in the moment between the test seeing the
            # process alive and the signal landing: its result printed, nothing on stderr, exit 0 true.
            assert not err.strip(), (where, err[-1000:])
        elif alive and code == 1 and name == "llm check" and _only_unreachable(err):
            # Likewise `llm check` against a closed port: it had printed its one error line and was
            # leaving (exit 1, its true result) when the signal was sent.
            pass
        elif alive:
            interrupted += 1
            assert code == 130, (where, code, err[-1000:])
            assert [line for line in err.splitlines() if line.strip()][-1] == "interrupted", (where, err)
    assert interrupted >= len(runs) // 2  # most signals must land while the command runs


def _only_unreachable(err: str) -> bool:
    said = [line for line in err.splitlines() if line.strip()]
    return len(said) == 1 and said[0].startswith("error: LLM server at") and "not reachable" in said[0]


def _run_matrix(
    workspace: Path,
    tmp_path: Path,
    names: tuple[str, ...],
    delays: tuple[float, ...],
    sig: int = signal.SIGINT,
):
    port = _free_port()
    commands = _commands(workspace, port)
    jobs = [(name, delay) for name in names for delay in delays]
    with ThreadPoolExecutor(2) as pool:  # two at a time: a 2-core machine, and timing stays realistic
        results = list(pool.map(lambda job: _interrupted_at(commands[job[0]], job[1], tmp_path, sig), jobs))
    return [(name, delay, result) for (name, delay), result in zip(jobs, results)]


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_ctrl_c_in_the_first_second_is_one_line_and_130(workspace, tmp_path):
    _check(_run_matrix(workspace, tmp_path, ("eval", "build"), QUICK_DELAYS))


def test_a_sigterm_is_read_as_ctrl_c(workspace, tmp_path):
    # `kill`, a service manager's or a container's stop: the command cleans up the same way (a
    # local server's files go with it) instead of ending at once.
    _check(_run_matrix(workspace, tmp_path, ("eval", "build"), QUICK_DELAYS, signal.SIGTERM), signal.SIGTERM)


@pytest.mark.slow
def test_ctrl_c_at_every_early_moment_of_every_command(workspace, tmp_path):
    names = ("eval", "build", "sql", "ask", "inspect", "serve", "llm check")
    _check(_run_matrix(workspace, tmp_path, names, ALL_DELAYS))


def test_ctrl_c_while_a_command_runs_is_the_same_line(workspace, capsys, monkeypatch):
    """In-process the handler is not changed (a test runner keeps its own Ctrl-C); the line is the same."""
    import flows.cli.commands.sql as sql

    def interrupted(_args):
        raise KeyboardInterrupt

    monkeypatch.setattr(sql, "run", interrupted)
    before = signal.getsignal(signal.SIGINT)  # whatever the runner (or an earlier test's server) set
    result = nkw_in_process(capsys, "sql", "-w", workspace, "SELECT 1")
    assert result.code == 130 and result.err.strip() == "interrupted"
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize(
    "argv, expected",
    [
        (["python", "-m", "flows.cli.main", "eval"], True),
        (["python", "-X", "importtime", "-u", "-m", "flows.cli.main", "eval"], True),
        (["python", "-W", "ignore", "/venv/bin/nkw", "sql"], True),
        (["/venv/bin/python", "/venv/bin/nkw", "sql"], True),
        (["python", "-m", "pytest", "tests"], False),
        (["python", "-c", "import flows"], False),
    ],
)
def test_the_cli_is_recognised_whatever_interpreter_options_come_first(monkeypatch, argv, expected):
    from flows.cli.interrupts import runs_as_program

    monkeypatch.setattr("sys.orig_argv", argv)
    assert runs_as_program() is expected


def test_ctrl_c_inside_a_duckdb_query_is_the_same_line(workspace, capsys, monkeypatch):
    """DuckDB turns a Ctrl-C during a query into RuntimeError('Query interrupted'): same line, 130."""
    import flows.cli.commands.sql as sql

    def interrupted(_args):
        raise RuntimeError("Query interrupted")

    monkeypatch.setattr(sql, "run", interrupted)
    result = nkw_in_process(capsys, "sql", "-w", workspace, "SELECT 1")
    assert result.code == 130 and result.err.strip() == "interrupted"


def test_ctrl_c_inside_a_scan_of_the_sql_command_is_not_an_sql_error(workspace, capsys, monkeypatch):
    """Seen at 0.75 s into `nkw sql`: the interrupt landed while DuckDB read a registered table, and
    the command's own handler reported DuckDB's error quoting it as a SQL error (exit 2)."""
    import duckdb

    import flows.cli.commands.sql as sql

    def interrupted(*_args, **_kwargs):
        raise duckdb.InvalidInputException(
            "reading the schema of the object registered as 'term_postings' failed: KeyboardInterrupt:"
        )

    monkeypatch.setattr(sql, "fetch_query", interrupted)
    result = nkw_in_process(capsys, "sql", "-w", workspace, "SELECT 1")
    assert result.code == 130 and result.err.strip() == "interrupted"


def test_duckdb_forms_of_an_interrupt_are_recognised_and_other_errors_are_not():
    import duckdb

    from flows.cli.interrupts import is_interrupt

    scan = duckdb.InvalidInputException(
        "exporting a stream from the object registered as 't' failed: KeyboardInterrupt:"
    )
    assert is_interrupt(scan) and is_interrupt(RuntimeError("Query interrupted"))
    wrapped = ValueError("reading failed")
    wrapped.__cause__ = KeyboardInterrupt()
    assert is_interrupt(wrapped)
    assert not is_interrupt(RuntimeError("out of memory")) and not is_interrupt(
        duckdb.InvalidInputException("bad")
    )
