"""One writer per workspace: `<workspace>/writer.lock` holds the writer's pid, host and start.

Acquired with an exclusive create, so two writers can never both succeed. A lock whose pid
is gone on this host (a killed build) is taken over; a lock from another host is honoured
(its process cannot be checked from here) and names that host. Readers take no lock: every
table partition lands by rename, so a reader sees it either before or after a write.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tasks.files import read_text
from tasks.tables.confine import WorkspaceEscape, describe, escaping_links
from tasks.tables.io import Workspace
from tasks.tables.ledger import ledger_root

LOCK_NAME = "writer.lock"


class WorkspaceLocked(RuntimeError):
    """Another writer holds the workspace."""


class UnsafeWorkspace(WorkspaceLocked, WorkspaceEscape):
    """The workspace holds a linked folder: no writer may take it (tasks.tables.confine)."""


@dataclass(frozen=True)
class LockHolder:
    pid: int
    host: str
    since: str
    command: str = ""

    def describe(self) -> str:
        what = f" ({self.command})" if self.command else ""
        return f"pid {self.pid} on {self.host} since {self.since}{what}"


def own_folders(workspace: Workspace) -> list[Path]:
    """The folders a writer writes into: each must be a folder if it exists at all."""
    return [workspace.tables_dir, workspace.manifest_dir, ledger_root(workspace.root), workspace.cache_dir,
            workspace.root / "runs"]


def lock_path(workspace: Workspace) -> Path:
    return workspace.root / LOCK_NAME


def read_holder(workspace: Workspace) -> LockHolder | None:
    try:
        data = json.loads(read_text(lock_path(workspace)))
        return LockHolder(
            int(data["pid"]), str(data["host"]), str(data["since"]), str(data.get("command", ""))
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return LockHolder(-1, "?", "?", "unreadable lock file")


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def is_stale(holder: LockHolder) -> bool:
    """A lock left behind by a process that no longer runs on this host."""
    if holder.pid == -1:
        return True
    return holder.host == socket.gethostname() and not _alive(holder.pid)


class WriterLock:
    """`with WriterLock(workspace, "build"):` — fails at once with WorkspaceLocked if held."""

    def __init__(self, workspace: Workspace, command: str = "") -> None:
        self.workspace = workspace
        self.command = command
        self.taken_over: LockHolder | None = None
        self._held = False

    def acquire(self) -> "WriterLock":
        if self.workspace.root.exists() and not self.workspace.root.is_dir():
            raise UnsafeWorkspace(f"workspace {self.workspace.root} is not a folder")
        self.workspace.root.mkdir(parents=True, exist_ok=True)
        for folder in own_folders(self.workspace):
            if folder.exists() and not folder.is_dir():
                raise UnsafeWorkspace(
                    f"workspace {self.workspace.root}: {folder.relative_to(self.workspace.root)} is not a "
                    "folder; move it away"
                )
        links = escaping_links(self.workspace.root)
        if links:
            raise UnsafeWorkspace(describe(self.workspace.root, links[0]))
        path = lock_path(self.workspace)
        payload = json.dumps(self._payload()).encode("utf-8")
        for _ in range(3):
            try:
                handle = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if path.is_dir() and not path.is_symlink():  # no lock of ours: never removed by us
                    raise UnsafeWorkspace(
                        f"workspace {self.workspace.root}: {LOCK_NAME} is a folder; move it away"
                    )
                holder = read_holder(self.workspace)
                if holder is None:
                    continue  # released meanwhile
                if holder.pid == os.getpid() and holder.host == socket.gethostname():
                    raise WorkspaceLocked(
                        f"workspace {self.workspace.root} is already being written by this process"
                    )
                if not is_stale(holder):
                    raise WorkspaceLocked(
                        f"workspace {self.workspace.root} is being written by {holder.describe()}"
                    )
                self.taken_over = holder
                _remove_if_same(path, holder)
                continue
            with os.fdopen(handle, "wb") as out:
                out.write(payload)
            self._held = True
            return self
        raise WorkspaceLocked(f"workspace {self.workspace.root}: could not take the writer lock")

    def release(self) -> None:
        if self._held:
            holder = read_holder(self.workspace)
            if holder is not None and holder.pid == os.getpid():
                lock_path(self.workspace).unlink(missing_ok=True)
            self._held = False

    def _payload(self) -> dict[str, Any]:
        since = datetime.now(timezone.utc).isoformat(timespec="seconds")
        return {"pid": os.getpid(), "host": socket.gethostname(), "since": since, "command": self.command}

    def __enter__(self) -> "WriterLock":
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


def _remove_if_same(path: Path, holder: LockHolder) -> None:
    """Remove a stale lock, unless another writer replaced it in the meantime."""
    try:
        data = json.loads(read_text(path))
        if int(data.get("pid", -1)) != holder.pid or data.get("since") != holder.since:
            return
    except (OSError, ValueError):
        pass
    path.unlink(missing_ok=True)
