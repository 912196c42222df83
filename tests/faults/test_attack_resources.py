"""Resource exhaustion and a misbehaving temporary Prefect server: a full disk while a stage
writes, a Prefect server that does not start, library log records carrying tracebacks. Each
ends as one line on the terminal and a non-zero exit where something was lost."""

from __future__ import annotations

import errno
import io
import logging
import os
import threading

import pytest

from flows import prefect_server
from flows.build import runner
from flows.cli.main import main
from flows.runtime import OneLine
from tasks.tables.io import Workspace, read_frame
from tasks.tables.manifest import load_manifest
from tests.conftest import SCREENPLAY

DOC = "the_lighthouse_key"
BUILD = ["--embeddings", "hashing", "--no-prefect", "--until", "split_sentences"]


def _failing_writes(tables: set[str], monkeypatch, code: int = errno.ENOSPC) -> None:
    """Writes of `tables` fail with OSError(`code`) at the write layer (a full disk, a bad sector)."""
    write = runner.write_table

    def write_or_fail(workspace, name, *args, **kwargs):
        if name in tables:
            raise OSError(code, os.strerror(code))
        return write(workspace, name, *args, **kwargs)

    monkeypatch.setattr(runner, "write_table", write_or_fail)


def _build(ws: Workspace, capsys) -> tuple[int, str, str]:
    rc = main(["build", str(SCREENPLAY), "-w", str(ws.root), *BUILD])
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def test_a_full_disk_stops_the_build_in_one_line_and_the_next_build_finishes(tmp_path, capsys, monkeypatch):
    ws = Workspace.at(tmp_path / "ws")
    _failing_writes({"chunks"}, monkeypatch)
    rc, out, err = _build(ws, capsys)
    assert rc == 1 and "Traceback" not in out + err
    assert err.strip().splitlines() == [
        "error: OSError: [Errno 28] No space left on device (rerun with --debug for details)"
    ]
    assert load_manifest(ws, DOC).stages["segment_sections"].status == "built"
    monkeypatch.undo()  # space again: the next build finishes what was lost
    rc, out, _ = _build(ws, capsys)
    assert rc == 0 and "0 failed" in out
    assert {r.status for r in load_manifest(ws, DOC).stages.values()} == {"built"}


def test_an_io_error_while_a_stage_writes_fails_that_stage_and_the_build_says_so(
    tmp_path, capsys, monkeypatch
):
    ws = Workspace.at(tmp_path / "ws")
    _failing_writes({"chunks"}, monkeypatch, errno.EIO)
    rc, out, err = _build(ws, capsys)
    assert rc == 1 and "Traceback" not in out + err
    assert "failed: the_lighthouse_key split_chunks: OSError: [Errno 5] Input/output error" in out
    assert "1 failed" in out
    statuses = {name: record.status for name, record in load_manifest(ws, DOC).stages.items()}
    assert statuses["segment_sections"] == "built" and statuses["split_chunks"] == "failed"
    assert read_frame(ws, "failures")["error"].str.contains("Input/output error").any()  # recorded


def test_when_even_the_failure_cannot_be_recorded_the_outcome_still_carries_it(tmp_path, capsys, monkeypatch):
    ws = Workspace.at(tmp_path / "ws")
    _failing_writes({"chunks", "failures"}, monkeypatch, errno.EIO)
    rc, out, err = _build(ws, capsys)
    assert rc == 1 and "Traceback" not in out + err
    # every stage writes its failures partition, so the first stage fails, and cannot record why
    assert "ingest_documents: OSError: [Errno 5] Input/output error (not recorded:" in out


def test_a_temporary_server_that_does_not_start_is_one_error_and_is_stopped(monkeypatch):
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    stopped: list[bool] = []
    crashes: list[BaseException] = []

    class FakeProcess:
        pid = 999_999_999  # no such process: the watchdog's kill is a no-op

        def poll(self):
            return None

        def terminate(self):
            stopped.append(True)

        def wait(self, timeout=None):
            return 0

    def slow_start(self, timeout=None):
        self.server_process = FakeProcess()
        raise RuntimeError("Timed out while attempting to connect to ephemeral Prefect API server.")

    monkeypatch.setattr(SubprocessASGIServer, "start", slow_start)
    monkeypatch.setattr(SubprocessASGIServer, "running", False, raising=False)
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    with temporary_settings(updates={PREFECT_API_URL: None}):
        with pytest.raises(prefect_server.PrefectServerError) as raised:
            prefect_server.reap_with_this_process()
    assert "did not start" in str(raised.value) and "--no-prefect" in str(raised.value)
    assert len(str(raised.value).splitlines()) == 1
    assert crashes == [] and stopped == [True]


def test_the_temporary_servers_output_goes_to_a_file(tmp_path):
    log = open(tmp_path / "server.log", "ab")
    try:
        shim = prefect_server._ServerOutputToFile(log)
        process = shim.Popen(["sh", "-c", "echo out; echo Traceback-like >&2"])
        process.wait(10)
        assert shim.TimeoutExpired is __import__("subprocess").TimeoutExpired
    finally:
        log.close()
    assert (tmp_path / "server.log").read_text().split() == ["out", "Traceback-like"]


def test_prefect_log_records_lose_their_tracebacks():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("prefect.nkw_attack")  # under prefect, without its API handler
    logger.addHandler(handler)
    try:
        prefect_server.one_line_prefect_logs()
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:
            logger.error("Task run failed with exception", exc_info=True)
    finally:
        logger.removeHandler(handler)
    assert "Traceback" not in stream.getvalue()
    assert stream.getvalue().strip() == (
        "Task run failed with exception: OSError: [Errno 28] No space left on device"
    )
    assert all(any(isinstance(f, OneLine) for f in h.filters) for h in logging.getLogger().handlers)
