"""One writer per workspace: an exclusive, non-blocking `flock` on `<workspace>/.lock`.

A second build of the same workspace is refused at once with one clear line instead of
interleaving writes. The lock is released when the holder exits, however it exits (the
kernel drops it with the file descriptor), so a killed build never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import os
from contextlib import contextmanager
from typing import Iterator

from tasks.tables.io import Workspace


class WorkspaceLocked(RuntimeError):
    """Another process is writing this workspace."""


@contextmanager
def workspace_lock(workspace: Workspace) -> Iterator[None]:
    """Hold the workspace's writer lock for the duration of the block; WorkspaceLocked if taken."""
    workspace.root.mkdir(parents=True, exist_ok=True)
    path = workspace.root / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 64, 0).decode("ascii", "replace").strip() or "another process"
            raise WorkspaceLocked(
                f"workspace {workspace.root} is being written by {holder}; wait for that build to finish"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()}".encode("ascii"), 0)
        yield
    finally:
        os.close(fd)
