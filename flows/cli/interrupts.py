"""Ctrl-C before a command has started, or after it has ended: one line and exit 130, at once.

The CLI's own imports take about a second (pandas, pyarrow, pydantic), and a KeyboardInterrupt
raised inside them escapes every handler as a traceback of dozens of lines; so can one raised
while the interpreter shuts down (joining threads, running exit hooks). Neither moment has work
to undo, so there the interrupt ends the process from the signal handler itself: no exception
unwinds through library code. While the command runs, Ctrl-C raises KeyboardInterrupt as usual,
so the command's own clean-up (locks, temporary files, a local server) runs before the same line.
SIGTERM (`kill`, a service manager's or a container's stop) is read as Ctrl-C: without it the
process ended at once, leaving a local server's slot folder and log behind.
Standard library only: `flows/__init__.py` imports it first of all when the process is the CLI.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a process ended by Ctrl-C
MESSAGE = "interrupted"
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # both end a command the same way
# DuckDB turns a Ctrl-C that lands inside a query into a plain RuntimeError with this text, or,
# inside a scan of a registered Python object, into its own exception quoting the KeyboardInterrupt.
DUCKDB_INTERRUPTED = "Query interrupted"


def is_interrupt(exc: BaseException) -> bool:
    """Whether an exception is a Ctrl-C in another library's form (DuckDB's interrupted query or
    scan), here or anywhere in its chain of causes."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        text = str(current).strip()
        if isinstance(current, KeyboardInterrupt):
            return True
        if isinstance(current, RuntimeError) and text == DUCKDB_INTERRUPTED:
            return True
        if "duckdb" in type(current).__module__ and "KeyboardInterrupt" in text:
            return True
        current = current.__cause__ or current.__context__
    return False


def _end_now(_signum: int, _frame: FrameType | None) -> None:
    try:
        sys.stdout.flush()  # what the command printed before the interrupt is kept
    except Exception:  # noqa: BLE001 - a closed or broken stdout must not stop the exit
        pass
    try:
        os.write(2, f"{MESSAGE}\n".encode())
    except OSError:
        pass
    os._exit(EXIT_INTERRUPTED)


def end_now(code: int) -> None:
    """End the process with `code` after flushing what it printed, without the interpreter's shutdown."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream must not stop the exit
            pass
    os._exit(code)


def _set(handler: object) -> None:
    if threading.current_thread() is threading.main_thread():  # signals are the main thread's only
        for signum in STOP_SIGNALS:
            signal.signal(signum, handler)  # type: ignore[arg-type]


def end_at_interrupt() -> None:
    """From now on Ctrl-C prints the one line and exits 130 at once (start-up, shut-down)."""
    _set(_end_now)


def raise_at_interrupt() -> None:
    """From now on Ctrl-C raises KeyboardInterrupt (a running command cleans up, then the same line)."""
    _set(signal.default_int_handler)


def runs_as_program() -> bool:
    """Whether this process was started as the CLI (`nkw ...` or `python -m flows.cli.main ...`),
    not as another program importing it (a test runner keeps its own Ctrl-C)."""
    argv = list(getattr(sys, "orig_argv", sys.argv))[1:]  # as the interpreter was started
    # Interpreter options come first (`python -u -X importtime -m ...`); -X and -W take a value.
    while argv and argv[0].startswith("-") and argv[0] not in ("-m", "-c", "-"):
        argv = argv[2:] if argv[0] in ("-X", "-W") else argv[1:]
    if argv[:2] == ["-m", "flows.cli.main"]:
        return True
    # `nkw` is a script the interpreter runs: its path is the interpreter's first argument.
    return bool(argv) and Path(argv[0]).stem == "nkw"
