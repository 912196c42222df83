"""Process settings chosen once at CLI start, before any model library is imported, what the
terminal shows while a long command runs (its progress), and log records as one line.

On a small shared host, OpenMP worker threads that spin while waiting for work burn the
cores other threads (and other processes) need: PyTorch's sentence embedding runs about
twice as fast with passive waiting. The user's own settings always win.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, TextIO

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
WAIT_LINE_EVERY_S = 10.0  # a wait's elapsed time in plain-line mode (CI logs, pipes)


def configure_process(environ: dict[str, str] | None = None, cores: int | None = None) -> dict[str, str]:
    """Set passive OpenMP waiting and one thread per core unless already set; returns what was set."""
    environ = os.environ if environ is None else environ
    cores = cores or os.cpu_count() or 1
    chosen = {"OMP_WAIT_POLICY": "PASSIVE", **{name: str(cores) for name in THREAD_VARIABLES}}
    applied = {}
    for name, value in chosen.items():
        if name not in environ:
            environ[name] = value
            applied[name] = value
    return applied


def quiet_prefect(verbose: bool = False, environ: dict[str, str] | None = None) -> None:
    """Prefect logs at WARNING unless `verbose` (or the user chose a level). Prefect reads its
    logging level once, when it is first imported: this must run before any Prefect import."""
    environ = os.environ if environ is None else environ
    environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Meter:
    """Progress of one long command on stderr: a rich bar with elapsed time and ETA on a terminal,
    a plain line at each tenth of the work (each item when there are few) elsewhere (CI, pipes),
    nothing when quiet. Rows are extra bars for the items in flight (a build's documents and their
    stages); they exist on a terminal only. Safe across threads."""

    def __init__(
        self,
        label: str,
        total: int = 0,
        *,
        quiet: bool = False,
        stream: TextIO | None = None,
        console: Any = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.total = total
        self.completed = 0
        self.stream = stream or sys.stderr
        self._clock = clock
        self._started = clock()
        self._lock = threading.Lock()
        self._printed_decile = -1
        self._bar: Any = None
        self._rows: dict[str, Any] = {}
        if quiet:
            self.mode = "off"
            return
        if console is None:
            from rich.console import Console  # only for a command that shows progress

            console = Console(file=self.stream)
        self.mode = "bar" if console.is_terminal else "lines"
        if self.mode == "bar":
            from rich import progress as rp

            self._bar = rp.Progress(
                rp.TextColumn("{task.description}"),
                rp.BarColumn(),
                rp.MofNCompleteColumn(),
                rp.TaskProgressColumn(),
                rp.TimeElapsedColumn(),
                rp.TextColumn("ETA"),
                rp.TimeRemainingColumn(),
                console=console,
            )
            self._main = self._bar.add_task(label, total=total or None)
            self._bar.start()

    def set_total(self, total: int) -> None:
        with self._lock:
            self.total = total
            if self._bar is not None:
                self._bar.update(self._main, total=total or None)

    def advance(self, n: int = 1, note: str = "") -> None:
        """`n` more items done; `note` names the last one (shown on the bar, or in the line)."""
        with self._lock:
            self.completed += n
            if self._bar is not None:
                description = f"{self.label} {note}" if note else self.label
                self._bar.update(self._main, advance=n, description=description)
            elif self.mode == "lines":
                self._line(note)

    def _line(self, note: str) -> None:
        done, total = self.completed, self.total
        decile = done * 10 // total if total else -1
        if total > 20 and decile == self._printed_decile and done < total:
            return
        self._printed_decile = decile
        elapsed = self._clock() - self._started
        shown = f"{done}/{total}" if total else str(done)
        eta = f", ETA {_duration(elapsed / done * (total - done))}" if total and 0 < done < total else ""
        detail = f" {note}" if note else ""
        print(f"[{self.label} {shown}]{detail} ({_duration(elapsed)}{eta})", file=self.stream, flush=True)

    def log(self, line: str) -> None:
        """A line that stays (a failure, a warning, a notice), above the bar on a terminal."""
        if self.mode == "off":
            return
        if self._bar is not None:
            self._bar.console.print(line, markup=False, highlight=False)
        else:
            with self._lock:
                print(line, file=self.stream, flush=True)

    @contextmanager
    def waiting(self, label: str, every: float = WAIT_LINE_EVERY_S) -> Iterator[None]:
        """A wait with nothing to count (a server starting), labelled, with its elapsed time: a row
        of its own with a running clock on a terminal; elsewhere a line when it starts and one every
        `every` seconds while it lasts. The caller says how it ended."""
        if self.mode == "off":
            yield
            return
        if self._bar is not None:
            with self._lock:
                task = self._bar.add_task(label, total=None)
            try:
                yield
            finally:
                with self._lock:
                    if self._bar is not None:
                        self._bar.remove_task(task)
            return
        started = self._clock()
        done = threading.Event()

        def tick() -> None:
            while not done.wait(every):
                self.log(f"[{label}] ({_duration(self._clock() - started)})")

        self.log(f"[{label}]")
        ticker = threading.Thread(target=tick, name="wait-line", daemon=True)
        ticker.start()
        try:
            yield
        finally:
            done.set()
            ticker.join()

    def row(self, key: str, description: str, completed: int, total: int) -> None:
        """Show or update the bar of one item in flight (a terminal only)."""
        if self._bar is None:
            return
        with self._lock:
            if key not in self._rows:
                self._rows[key] = self._bar.add_task(description, total=total)
            self._bar.update(self._rows[key], completed=completed, total=total, description=description)

    def drop_row(self, key: str) -> None:
        if self._bar is None:
            return
        with self._lock:
            if key in self._rows:
                self._bar.remove_task(self._rows.pop(key))

    def close(self) -> None:
        if self._bar is not None:
            for key in list(self._rows):
                self.drop_row(key)
            self._bar.stop()
            self._bar = None


# Log records as one line: the exception's type and text instead of its traceback. The terminal of
# a command gets one line per problem (the project's rule); a traceback is for `--debug`. Libraries
# log exceptions with their tracebacks (asyncio on a failed accept, Prefect on a failed task run),
# so their handlers get this filter.


class OneLine(logging.Filter):
    """Fold a record's exception into its message and drop the traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            exc = record.exc_info[1]
            text = " ".join(str(exc).split())[:300]
            message = record.getMessage()
            record.msg = f"{message}: {type(exc).__name__}: {text}" if exc else message
            record.args = None
            record.exc_info = None
            record.exc_text = None
        record.stack_info = None
        return True


def add_one_line(targets: Iterable[logging.Logger | logging.Handler]) -> None:
    """Install `OneLine` on loggers or handlers, once each."""
    for target in targets:
        if not any(isinstance(f, OneLine) for f in target.filters):
            target.addFilter(OneLine())


def one_line_handlers(prefix: str) -> None:
    """`OneLine` on every handler of the loggers named `prefix` or `prefix.*` (a logger's own filters
    do not see records of its children; its handlers do)."""
    names = [n for n in list(logging.root.manager.loggerDict) if n == prefix or n.startswith(prefix + ".")]
    for name in names:
        logger = logging.getLogger(name)
        add_one_line(logger.handlers)
