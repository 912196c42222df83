"""Which Prefect server a build or evaluation reports to, and the temporary one's life.

In order: the server `PREFECT_API_URL` names (it must answer); a server already running at the
local address `prefect server start` listens on by default (`NKW_PREFECT_LOCAL_URL`, empty to
never look); else a temporary server of this process's own, whose start-up (10-45 s on two busy
cores) is shown as a labelled wait with its elapsed time.

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
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import httpx

from flows.runtime import Meter, add_one_line, one_line_handlers
from tasks.llm.client.bounded_reply import bounded_http_client

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
# Where `prefect server start` listens when given no host or port: a server someone left running
# there is used instead of starting a temporary one.
LOCAL_SERVER_URL = "http://127.0.0.1:4200/api"
LOCAL_SERVER_VARIABLE = "NKW_PREFECT_LOCAL_URL"
WAIT_LABEL = "prefect: starting a temporary server"
LOCAL_PROBE_S = 1.0  # a local server answers its health check in milliseconds; nothing listening, at once
_announced: set[str] = set()  # servers this process has named once already
_answered: set[str] = set()  # servers that answered this process once: not asked again per flow


class PrefectServerError(RuntimeError):
    """No Prefect server to report to (the configured one does not answer, the temporary one did not
    start); the command says so in one line."""


@dataclass(frozen=True)
class PrefectServer:
    """The server this process's flow runs report to."""

    kind: str  # "configured" (PREFECT_API_URL), "running" (found at the local address), "temporary"
    url: str
    pid: int | None = None  # the temporary server's process


def choose_server(meter: Meter | None = None) -> PrefectServer:
    """The server flow runs report to: the configured one, else one running at the local address,
    else a temporary one started now. `meter` (a flows.runtime.Meter) gets one line naming a reused
    server, and shows the temporary one's start-up as a labelled wait.

    Raises PrefectServerError when the configured server does not answer or the temporary one does
    not start."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    one_line_prefect_logs()
    configured = PREFECT_API_URL.value()
    if configured:
        problem = None if configured in _answered else _configured_problem()
        if problem is not None:
            raise PrefectServerError(
                f"the Prefect server at {configured} (PREFECT_API_URL) does not answer ({problem}); "
                "start it, unset PREFECT_API_URL to use a temporary server, or use --no-prefect"
            )
        _answered.add(configured)
        _announce(meter, configured, f"prefect: runs reported to {configured} (PREFECT_API_URL)")
        return PrefectServer("configured", configured)
    local = local_server_url()
    if local and (local in _answered or is_prefect_server(local)):
        _answered.add(local)
        _announce(meter, local, f"prefect: runs reported to the server running at {local}")
        return PrefectServer("running", local)
    if not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return PrefectServer("configured", "")  # Prefect's own error names the missing setting
    pid = reap_with_this_process(meter)
    return PrefectServer("temporary", _temporary_server().api_url, pid)


def _started_pid() -> int | None:
    """The pid of the temporary server this process started already, if it runs."""
    if "prefect.server.api.server" not in sys.modules:
        return None  # its module never loaded: no server started
    server = _temporary_server()
    return server.server_process.pid if server.running and server.server_process is not None else None


def _temporary_server():
    """The temporary server Prefect's own client uses (one per process)."""
    from prefect.server.api.server import SubprocessASGIServer

    return SubprocessASGIServer()


def local_server_url(environ: dict[str, str] | None = None) -> str:
    """The address where a running server is looked for ("" when the user turned the search off)."""
    environ = os.environ if environ is None else environ
    return environ.get(LOCAL_SERVER_VARIABLE, LOCAL_SERVER_URL).strip().rstrip("/")


def is_prefect_server(api_url: str, timeout: float = LOCAL_PROBE_S) -> bool:
    """Whether a Prefect server answers its health check at `api_url` (read at most 1 KB: whatever
    listens there is not trusted to be Prefect)."""
    try:
        with httpx.Client(timeout=timeout) as client:
            with client.stream("GET", f"{api_url}/health") as reply:
                body = b""
                for block in reply.iter_bytes():
                    body += block
                    if len(body) > 1024:
                        return False
                return reply.status_code == 200 and body.strip() == b"true"
    except (httpx.HTTPError, OSError):
        return False


def _configured_problem() -> str | None:
    """Why the configured server cannot be reached (None when it answers), asked with Prefect's own
    client so the user's credentials and settings apply."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        problem = client.api_healthcheck()
    return None if problem is None else " ".join(f"{type(problem).__name__}: {problem}".split())[:160]


def _announce(meter: Meter | None, url: str, line: str) -> None:
    """Name a reused server once per process (a command may run several flows)."""
    if meter is not None and url not in _announced:
        _announced.add(url)
        meter.log(line)


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


def reap_with_this_process(meter: Meter | None = None) -> int | None:
    """Start Prefect's temporary server (if this process uses one) so that it cannot outlive this
    process, and return once it answers API requests; the server's pid, or None when Prefect talks
    to a configured server. `meter` (a flows.runtime.Meter) shows the wait, labelled, with its
    elapsed time, and a line when the server is ready.

    The server reports healthy before it is ready: its first API answer took 0.6-0.8 s where the
    next took 35-60 ms, and the first flow run paid for it. It is asked once here instead, and the
    flow engine's modules (0.15-0.25 s of imports on a flow's first call) are imported while the
    server starts, when this process only waits."""
    from prefect.settings import PREFECT_API_URL, PREFECT_SERVER_EPHEMERAL_ENABLED

    one_line_prefect_logs()
    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    with _lock:
        known = _started_pid()
        if known is not None:
            return known
        started = time.monotonic()
        waiting = meter.waiting(WAIT_LABEL) if meter is not None else nullcontext()
        with waiting:
            # Prefect's server module loads its whole API app (1.5-4 s of imports): part of the wait.
            pid = _start(_temporary_server())
        if meter is not None:
            meter.log(
                f"prefect: temporary server ready in {time.monotonic() - started:.1f} s "
                "(a running server saves this wait: see docs/operations.md)"
            )
        return pid


def _start(server) -> int:
    """Start `server` with its pid told to the watchdog as soon as it exists; the pid once it answers."""
    from prefect.server.api import server as server_module

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
    try:
        with bounded_http_client(1024 * 1024, timeout=30) as client:  # bounded as every server reply
            client.get(f"{api_url}/admin/version")
    except httpx.HTTPError:  # a slow or failing server shows itself to the flow that uses it
        pass


@contextmanager
def reporting_to_server(meter: Meter | None = None, workers: bool = False) -> Iterator[PrefectServer]:
    """Within: flow runs report to the server `choose_server` picks (started first when temporary).

    A server found running at the local address is named to Prefect by URL here: its settings were
    read before the search. Worker processes (`workers`) inherit the settings with every task, so
    they report to this process's temporary server by its URL instead of each starting their own.

    Runs reported to the temporary server send no heartbeats. Heartbeats let a lasting server mark
    a crashed run; the temporary server ends with this process and runs no service that reads
    them. The flow engine's heartbeat thread sleeps in one-second steps and a finishing flow joins
    it, which held up the end of every build and evaluation by up to a second. Runs reported to a
    lasting server keep their heartbeats."""
    from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    server = choose_server(meter)
    updates: dict[Any, Any] = {}
    if server.kind == "running" or (server.kind == "temporary" and workers):
        updates[PREFECT_API_URL] = server.url
    if server.kind == "temporary":
        updates[PREFECT_FLOWS_HEARTBEAT_FREQUENCY] = None
    with temporary_settings(updates=updates):
        yield server
