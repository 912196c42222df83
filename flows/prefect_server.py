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
from typing import Iterator

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

    if PREFECT_API_URL.value() or not PREFECT_SERVER_EPHEMERAL_ENABLED.value():
        return None
    from prefect.server.api.server import SubprocessASGIServer

    with _lock:
        server = SubprocessASGIServer()  # the instance Prefect's own client uses
        if server.running and server.server_process is not None:
            return server.server_process.pid
        fd = _watchdog()
        # The server's pid goes to the watchdog as soon as it exists, not after its (slow) start-up.
        starter = threading.Thread(target=server.start, daemon=True)
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
        if server.server_process is None:
            raise RuntimeError("the temporary Prefect server did not start")
        _first_answer(server.api_url)
        return server.server_process.pid


def _first_answer(api_url: str) -> None:
    """One API request, so the server's first-request set-up is done before a flow needs it."""
    import httpx

    try:
        httpx.get(f"{api_url}/admin/version", timeout=30)
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
