"""Progress on stderr: plain lines off a terminal (CI, pipes, tests), a rich bar with ETA on one,
nothing when quiet; and Prefect quiet unless asked for, set before Prefect is imported."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console

from flows.build.progress import Progress
from flows.build.runner import DocumentReport, StageOutcome
from flows.runtime import Meter, quiet_prefect

ROOT = Path(__file__).resolve().parents[3]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def plain() -> tuple[io.StringIO, Console]:
    stream = io.StringIO()
    return stream, Console(file=stream, force_terminal=False)


def terminal() -> tuple[io.StringIO, Console]:
    stream = io.StringIO()
    return stream, Console(file=stream, force_terminal=True, width=120, color_system=None)


def test_plain_lines_count_and_estimate_the_rest():
    stream, console = plain()
    clock = Clock()
    meter = Meter("questions", 4, stream=stream, console=console, clock=clock)
    for n in range(4):
        clock.now += 10
        meter.advance(1, f"doc{n}")
    meter.close()
    assert meter.mode == "lines"
    assert stream.getvalue().splitlines() == [
        "[questions 1/4] doc0 (10s, ETA 30s)",
        "[questions 2/4] doc1 (20s, ETA 20s)",
        "[questions 3/4] doc2 (30s, ETA 10s)",
        "[questions 4/4] doc3 (40s)",
    ]


def test_plain_lines_of_a_long_run_come_at_each_tenth():
    stream, console = plain()
    clock = Clock()
    meter = Meter("settings x questions", 310, stream=stream, console=console, clock=clock)
    for _ in range(310):
        clock.now += 1
        meter.advance()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 11  # the first answer, each tenth, and the last
    assert lines[0] == "[settings x questions 1/310] (1s, ETA 5m09s)"
    assert lines[-1] == "[settings x questions 310/310] (5m10s)"


def test_quiet_prints_nothing():
    stream, console = terminal()
    meter = Meter("documents", 3, quiet=True, stream=stream, console=console)
    meter.advance()
    meter.log("a failure")
    meter.row("doc", "doc stage", 1, 2)
    meter.close()
    assert meter.mode == "off" and stream.getvalue() == ""


def test_a_terminal_gets_a_bar_with_eta():
    stream, console = terminal()
    meter = Meter("questions", 10, stream=stream, console=console)
    assert meter.mode == "bar"
    for _ in range(3):
        meter.advance(1, "the_lighthouse_key")
    meter.log("warning: something to keep")
    meter.close()
    out = stream.getvalue()
    assert "questions the_lighthouse_key" in out and "3/10" in out and "30%" in out and "ETA" in out
    assert "warning: something to keep" in out


def _report(doc_id: str, *statuses: str) -> DocumentReport:
    outcomes = [
        StageOutcome(f"stage_{i}", s, error="boom" if s == "failed" else None) for i, s in enumerate(statuses)
    ]
    return DocumentReport(doc_id, doc_id, outcomes)


def test_build_lines_name_documents_and_failures_not_every_stage():
    stream, console = plain()
    progress = Progress(2, stream=stream, stages=3, console=console)
    good, bad = (
        _report("good_doc", "built", "skipped", "built"),
        _report("bad_doc", "built", "failed", "blocked"),
    )
    for report in (good, bad):
        for outcome in report.outcomes:
            progress(report.doc_id, outcome)
        progress.document_done(report)
    progress.close()
    lines = [line.split(" (")[0] for line in stream.getvalue().splitlines()]
    assert lines == [
        "[documents 1/2] good_doc done",
        "  bad_doc stage_1 failed 0.0s: boom",
        "[documents 2/2] bad_doc FAILED",
    ]


def test_build_bar_shows_the_stages_of_documents_in_flight():
    stream, console = terminal()
    progress = Progress(2, stream=stream, stages=3, console=console)
    progress("doc_a", StageOutcome("segment_sections", "built"))
    progress.meter._bar.refresh()
    during = stream.getvalue()
    progress("doc_a", StageOutcome("split_chunks", "built"))
    progress("doc_a", StageOutcome("embed_texts", "built"))
    progress.document_done(_report("doc_a", "built", "built", "built"))
    progress.close()
    assert "doc_a segment_sections" in during and "1/3" in during and "0/2" in during
    assert "1/2" in stream.getvalue()


def test_a_worker_process_never_draws_a_bar():
    progress = Progress(0, stream=io.StringIO())
    assert progress.meter.mode == "lines"


def test_prefect_is_quiet_unless_verbose_and_the_user_wins():
    environ: dict[str, str] = {}
    quiet_prefect(False, environ)
    assert environ == {"PREFECT_LOGGING_LEVEL": "WARNING"}
    environ = {}
    quiet_prefect(True, environ)
    assert environ == {"PREFECT_LOGGING_LEVEL": "INFO"}
    environ = {"PREFECT_LOGGING_LEVEL": "DEBUG"}
    quiet_prefect(False, environ)
    assert environ["PREFECT_LOGGING_LEVEL"] == "DEBUG"


def _prefect_as_the_command_sees_it(home: Path, *flags: str) -> dict:
    # A fresh interpreter: the CLI must configure Prefect before the command module imports it,
    # since Prefect reads its settings once, at import.
    code = (
        "import json, logging, sys\n"
        "from flows.cli import main as cli\n"
        "assert 'prefect' not in sys.modules\n"
        "from importlib import import_module\n"
        "real = import_module\n"
        "def seen(args):\n"
        "    from prefect.settings import get_current_settings\n"
        "    settings = get_current_settings()\n"
        "    level = logging.getLogger('prefect.task_runs').getEffectiveLevel()\n"
        "    timeout = settings.server.ephemeral.startup_timeout_seconds\n"
        "    print(json.dumps({'task_runs': level, 'timeout': timeout, 'home': str(settings.home)}))\n"
        "    return 0\n"
        "def fake(name):\n"
        "    module = real(name)\n"
        "    module.run = seen\n"
        "    return module\n"
        "cli.import_module = fake\n"
        f"cli.main(['build', 'x', '-w', 'ws', *{list(flags)!r}])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["HOME"] = str(home)  # the CLI's PREFECT_HOME defaults under it
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_cli_configures_prefect_before_importing_it(tmp_path):
    quiet = _prefect_as_the_command_sees_it(tmp_path)
    assert quiet["task_runs"] == 30  # WARNING: no "Task run ... Finished in state Completed()"
    assert quiet["timeout"] == 180  # the temporary server's start-up timeout of a busy machine
    assert quiet["home"] == str(tmp_path / ".nkw" / "prefect")
    assert (
        _prefect_as_the_command_sees_it(tmp_path, "--verbose")["task_runs"] == 20
    )  # INFO: Prefect's logs are back


def test_a_wait_off_a_terminal_is_labelled_and_tells_its_elapsed_time():
    stream, console = plain()
    meter = Meter("documents", 1, stream=stream, console=console)
    with meter.waiting("prefect: starting a temporary server", every=0.05):
        time.sleep(0.3)  # a few ticks of the wait's line
    meter.close()
    lines = stream.getvalue().splitlines()
    assert lines[0] == "[prefect: starting a temporary server]"
    assert len(lines) >= 2 and all(
        line.startswith("[prefect: starting a temporary server] (") and line.endswith("s)")
        for line in lines[1:]
    )


def test_a_wait_on_a_terminal_is_a_labelled_row_with_a_clock_that_goes_when_it_ends():
    stream, console = terminal()
    meter = Meter("documents", 2, stream=stream, console=console)
    with meter.waiting("prefect: starting a temporary server"):
        meter._bar.refresh()
        during = stream.getvalue()
        rows = len(meter._bar.tasks)
    assert "prefect: starting a temporary server" in during and "0:00:0" in during  # elapsed, h:mm:ss
    assert rows == 2 and len(meter._bar.tasks) == 1  # the row is gone once the wait is over
    meter.close()


def test_a_quiet_wait_prints_nothing():
    stream, console = terminal()
    meter = Meter("documents", 1, quiet=True, stream=stream, console=console)
    with meter.waiting("prefect: starting a temporary server", every=0.01):
        time.sleep(0.05)
    assert stream.getvalue() == ""
