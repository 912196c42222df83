"""Opening and writing files without trusting what sits at their path.

Reads (`open_regular`, `read_bytes`, `read_text`) open only regular files: a FIFO, a device, a
socket or a folder put where a workspace file belongs (a ledger record, a manifest, the writer
lock, a cache entry) is refused from `stat` and opened non-blocking, so it can never hang the
command; the refusal is a `NotRegularFile` (an OSError, so readers that take an unreadable file
as damaged go on doing so) whose message names the file.

Writes outside the workspace (`write_output`: view, report, export) land the way workspace
writes do, by a temp file in the same folder renamed into place, and refuse a target or folder
that is a symbolic link (`UnsafeOutput`): a link planted at `OUT/doc.html` would otherwise carry
the write to wherever it points.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path
from typing import IO

NONBLOCK = getattr(os, "O_NONBLOCK", 0)
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
DIRECTORY = getattr(os, "O_DIRECTORY", 0)


class Refusal(Exception):
    """Bad input refused before anything was done with it: one line, exit status 2."""


class NotRegularFile(Refusal, OSError):
    """A path that holds something other than a regular file (never opened for reading)."""


class UnsafeOutput(Refusal, OSError):
    """An output path that is a link (or not a file): writing there would go elsewhere."""


def kind(mode: int) -> str:
    """What a `stat` mode is, in words ("a FIFO", "a device", ...)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def _refuse(path: Path, mode: int) -> NotRegularFile:
    return NotRegularFile(f"{path} is {kind(mode)}, not a regular file; move it away")


def open_regular(path: str | os.PathLike[str], text: bool = False) -> IO:
    """`path` opened for reading (binary, or UTF-8 text) if it is a regular file; NotRegularFile otherwise.

    Checked from `stat` before opening (a device is never opened) and again from `fstat` after
    a non-blocking open (something swapped in between is still caught, and a FIFO never blocks)."""
    path = Path(path)
    mode = os.stat(path).st_mode  # FileNotFoundError and friends pass through as they are
    if not stat.S_ISREG(mode):
        raise _refuse(path, mode)
    fd = os.open(path, os.O_RDONLY | NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse(path, mode)
        return os.fdopen(fd, "r", encoding="utf-8") if text else os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file `path` (NotRegularFile for anything else)."""
    with open_regular(path) as handle:
        return handle.read()


def read_text(path: str | os.PathLike[str]) -> str:
    """The UTF-8 text of the regular file `path` (NotRegularFile for anything else)."""
    with open_regular(path, text=True) as handle:
        return handle.read()


def open_append(path: str | os.PathLike[str], truncate: bool = False) -> IO:
    """`path` opened for appending UTF-8 text (created if absent, emptied with `truncate`), if it is
    or becomes a regular file; a FIFO or a link in its place is refused without blocking."""
    path = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | NONBLOCK | NOFOLLOW
    try:
        fd = os.open(path, flags, 0o666)
    except OSError:
        mode = os.lstat(path).st_mode  # why it failed: a link (O_NOFOLLOW) or a FIFO without a reader
        if stat.S_ISREG(mode):
            raise
        raise _refuse(path, mode) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse(path, mode)
        if truncate:
            os.ftruncate(fd, 0)
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def is_regular(path: str | os.PathLike[str]) -> bool:
    """True when `path` (followed) is a regular file; never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def check_output_folder(folder: Path) -> None:
    """Refuse an output folder that is a symbolic link or not a folder (before anything is made)."""
    try:
        mode = os.lstat(folder).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode):
        raise UnsafeOutput(f"output folder {folder} is a symbolic link; refusing to write through it")
    if not stat.S_ISDIR(mode):
        raise UnsafeOutput(f"output folder {folder} is {kind(mode)}, not a folder")


def write_output(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Write `data` to `path` outside the workspace: temp file in the same folder, then rename.

    The folder and the target must not be symbolic links, and an existing target must be a
    regular file; the folder is opened once (no links followed) and every step goes through it,
    so a link swapped in while writing is not followed either."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    check_output_folder(path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    check_output_folder(path.parent)
    folder = os.open(path.parent, os.O_RDONLY | DIRECTORY | NOFOLLOW)
    temp = f".{path.name}.{secrets.token_hex(6)}.tmp"
    try:
        try:
            mode = os.lstat(path.name, dir_fd=folder).st_mode
        except FileNotFoundError:
            mode = None
        if mode is not None and stat.S_ISLNK(mode):
            raise UnsafeOutput(f"{path} is a symbolic link; refusing to write through it (remove it)")
        if mode is not None and not stat.S_ISREG(mode):
            raise UnsafeOutput(f"{path} is {kind(mode)}, not a regular file; refusing to replace it")
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW, 0o666, dir_fd=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(payload)
                out.flush()
                os.fsync(out.fileno())
            # A rename replaces whatever sits at the name (a link planted meanwhile too), never a target.
            os.replace(temp, path.name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except OSError:
                pass
            raise
    finally:
        os.close(folder)
    return path
