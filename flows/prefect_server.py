"""The temporary Prefect server of a build or evaluation dies with the process that started it.

Without `PREFECT_API_URL`, Prefect starts a local API server as a child process and stops it
at exit — but a process killed with SIGKILL runs no exit handlers, and the server (~200 MB)
would live on. So the server is started here, and a tiny watchdog process holds the read end
of a pipe whose write end only this process holds: when this process dies, however it dies,
the pipe closes and the watchdog stops the server.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from flows.log_lines import add_one_line, one_line_handlers

WATCHDOG = """
import os, signal, sys, time
pids, buffer = set(), b""
while True:
    block = os.read(int(sys.argv[1]), 64)
    if not block:
        break
    buffer += block
    *lines, buffer = buffer.split(b"\\n")
    pids.update(int(line) for line in lines if line.strip())
for pid in pids:
    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
time.sleep(3)
for pid in pids:
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
"""

_watchdog_fd: int | None = None
_lock = threading.Lock()
DEFAULT_STARTUP_S = 180.0


class PrefectServerError(RuntimeError):
    """The temporary Prefect server did not start (or stopped); the command says so in one line."""


def _watchdog() -> int:
    """The write end of the pipe to this process's watchdog (started once)."""
    global _watchdog_fd
    if _watchdog_fd is None:
        read_end, write_end = os.pipe()  # not inherited by other children (PEP 446)
        subprocess.Popen(
            [sys.executable, "-c", WATCHDOG, str(read_end)],
            pass_fds=(read_end,),
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(read_end)
        _watchdog_fd = write_end
    return _watchdog_fd


def reap_with_this_process() -> int | None:
    """Start Prefect's temporary server (if this process uses one) so that it cannot outlive this
    process, and return once it answers API requests; the server's pid, or None when Prefect talks
    to a configured server.

    The server reports healthy before it is ready: its first API answer took 0.6-0.8 s where the
    next took 35-60 ms, and the first flow run paid for it. It is asked once here instead, and the
    flow engine's modules (0.15-0.25 s of imports on a flow's first call) are imported while the
    server starts, when this process only waits."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    one_line_prefect_logs()
    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    from prefect.server.api import server as server_module
    from prefect.server.api.server import SubprocessASGIServer


    with _lock:
        server = SubprocessASGIServer()  # the instance Prefect's own client uses
        if server.running and server.server_process is not None:
            return server.server_process.pid
        fd = _watchdog()
        if not isinstance(server_module.subprocess, _ServerOutputToFile):
            server_module.subprocess = _ServerOutputToFile(_server_log())  # type: ignore[attr-defined]
        failed: list[BaseException] = []
        timeout = _startup_timeout()

        def start() -> None:
            # In a thread, an exception would print its traceback to the terminal: keep it instead.
            try:
                server.start(timeout=timeout)
            except Exception as exc:  # noqa: BLE001 - reported below as one line
                failed.append(exc)

        # The server's pid goes to the watchdog as soon as it exists, not after its (slow) start-up.
        starter = threading.Thread(target=start, daemon=True)
        starter.start()
        told: set[int] = set()
        imported = False
        while starter.is_alive() or (server.server_process and server.server_process.pid not in told):
            process = server.server_process
            if process is not None and process.pid not in told:
                os.write(fd, f"{process.pid}\n".encode())
                told.add(process.pid)
            if not imported and told:
                import prefect.flow_engine  # noqa: F401
                import prefect.utilities.visualization  # noqa: F401

                imported = True
            starter.join(0.01)
        if failed or server.server_process is None:
            _stop(server)  # a half-started server must not hold the port for the next attempt
            reason = " ".join(str(failed[0]).split())[:160] if failed else "no server process"
            raise PrefectServerError(
                f"the temporary Prefect server did not start within {timeout:g} s ({reason}); "
                "run again, raise PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS, or use --no-prefect"
            )
        _first_answer(server.api_url)
        return server.server_process.pid


def one_line_prefect_logs() -> None:
    """Prefect logs a failed task or flow run with its traceback on the terminal: one line instead
    (the command's own error line follows; `--debug` re-raises nkw's own errors)."""
    import logging

    one_line_handlers("prefect")
    add_one_line(logging.getLogger().handlers)


def _server_log():
    """The temporary server's own output (tracebacks of its services when it stops, start-up noise)
    goes to a file in PREFECT_HOME, not the terminal of the command that started it."""
    from prefect.settings import PREFECT_HOME

    home = Path(PREFECT_HOME.value()).expanduser()
    try:
        home.mkdir(parents=True, exist_ok=True)
        return open(home / "temporary-server.log", "ab")  # noqa: SIM115 - held by the server process
    except OSError:
        return subprocess.DEVNULL  # a full disk must not stop the server from starting


class _ServerOutputToFile:
    """`subprocess` as Prefect's server module sees it: Popen sends the child's output to `output`."""

    def __init__(self, output) -> None:
        self._output = output

    def __getattr__(self, name: str):
        return getattr(subprocess, name)

    def Popen(self, *args, **kwargs):  # noqa: N802 - the name Prefect calls
        kwargs.setdefault("stdout", self._output)
        kwargs.setdefault("stderr", self._output)
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen(*args, **kwargs)


def _startup_timeout() -> int:
    """Seconds the server may take to answer: the user's setting, 180 s by default. (Passed to
    Prefect explicitly: its setting is read once, before this process sets the default.)"""
    try:
        value = float(os.environ.get("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", DEFAULT_STARTUP_S))
    except ValueError:
        value = DEFAULT_STARTUP_S
    return max(1, min(int(value), 3600))


def _stop(server) -> None:
    process = server.server_process
    if process is not None and process.poll() is None:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
    server.running = False


def _first_answer(api_url: str) -> None:
    """One API request, so the server's first-request set-up is done before a flow needs it."""
    import httpx

    from tasks.llm.client.bounded_reply import bounded_http_client

    try:
        with bounded_http_client(1024 * 1024, timeout=30) as client:  # bounded as every server reply
            client.get(f"{api_url}/admin/version")
    except httpx.HTTPError:  # a slow or failing server shows itself to the flow that uses it
        pass


@contextmanager
def without_heartbeats() -> Iterator[None]:
    """Within: flow runs reporting to this process's temporary server send no heartbeats.

    Heartbeats let a lasting server mark a crashed run; the temporary server ends with this process
    and runs no service that reads them. The flow engine's heartbeat thread sleeps in one-second
    steps and a finishing flow joins it, which held up the end of every build and evaluation by up
    to a second. Runs reported to a configured server keep their heartbeats."""
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    if reap_with_this_process() is None:
        yield
        return
    with temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}):
        yield


@contextmanager
def shared_with_workers() -> Iterator[None]:
    """Within: Prefect's settings name this process's temporary server by URL, so worker processes
    (which inherit the settings with every task) report to it instead of each starting their own.
    Nothing changes when Prefect talks to a configured server."""
    from prefect.server.api.server import SubprocessASGIServer
    from prefect.settings import PREFECT_API_URL, temporary_settings

    if reap_with_this_process() is None:
        yield
        return
    with temporary_settings(updates={PREFECT_API_URL: SubprocessASGIServer().api_url}):
        yield
