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
    process; the server's pid, or None when Prefect talks to a configured server."""
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
        while starter.is_alive() or (server.server_process and server.server_process.pid not in told):
            process = server.server_process
            if process is not None and process.pid not in told:
                os.write(fd, f"{process.pid}\n".encode())
                told.add(process.pid)
            starter.join(0.01)
        if server.server_process is None:
            raise RuntimeError("the temporary Prefect server did not start")
        return server.server_process.pid


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
