"""What the attack suites share: `nkw` run in-process as a user would, a clock that ends a hang,
tiny documents, and the outcome every attack must end in (a one-line error and a non-zero exit,
or a failures row; never a traceback, never a lost row of another document)."""

from __future__ import annotations

import contextlib
import signal
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from flows.cli.main import main
from tasks.tables.io import Workspace, read_frame

FAST = ["--embeddings", "hashing", "--no-prefect", "-q"]
INGEST_ONLY = [*FAST, "--until", "split_chunks"]  # ingest, sections and chunks: what inputs decide

GOOD_TEXT = (
    "Mara walked to the old mill at dawn. She found the brass key under a stone.\n\n"
    "Tomas waited by the river. He told Mara the key opened the chapel door.\n"
)
OTHER_TEXT = "The fox crossed the frozen lake. The hunter followed its tracks until night fell.\n"


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    def clean_failure(self, listing: bool = False) -> None:
        """A refusal in one line on stderr and a non-zero exit (`listing`: the line may be followed by
        one line per bad record, as `nkw eval` lists a questions file's problems)."""
        assert self.code not in (0, None), (self.out, self.err)
        self.no_traceback()
        lines = [line for line in self.err.splitlines() if line.strip()]
        assert lines and lines[0].startswith("error:"), self.err
        assert len(lines) == 1 or (listing and all("line" in rest for rest in lines[1:])), self.err

    def no_traceback(self) -> None:
        """No traceback, and no exception the command did not expect (printed with a --debug hint)."""
        assert "Traceback" not in self.err + self.out, self.err
        assert "rerun with --debug" not in self.err, self.err


def nkw_in_process(capsys, *args: str, seconds: float = 60) -> Outcome:
    """`nkw ARGS` in this process; an exception escaping it fails the test (it would be a traceback)."""
    with time_limit(seconds):
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse refusals
            code = exc.code
    captured = capsys.readouterr()
    return Outcome(code, captured.out, captured.err)


class Hang(BaseException):
    """The attack kept `nkw` busy past its time limit (a BaseException: `nkw` must not report it as
    one of its own errors)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise Hang in the main thread after `seconds` (a blocking open or read is interrupted too)."""

    def expire(_signum, _frame):
        raise Hang(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def write_good_inputs(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    good, other = folder / "good.txt", folder / "other.txt"
    good.write_text(GOOD_TEXT)
    other.write_text(OTHER_TEXT)
    return [good, other]


def doc_ids(workspace: Workspace, table: str = "documents") -> list[str]:
    return sorted(read_frame(workspace, table, columns=["doc_id"])["doc_id"].unique())


def failures(workspace: Workspace) -> list[str]:
    frame = read_frame(workspace, "failures")
    return [f"{row.doc_id}: {row.error}" for row in frame.itertuples()]


def rows_of(workspace: Workspace, doc_id: str, tables: tuple[str, ...] = ("documents", "chunks")) -> dict:
    return {
        table: sorted(map(str, read_frame(workspace, table).query("doc_id == @doc_id").to_dict("records")))
        for table in tables
    }
