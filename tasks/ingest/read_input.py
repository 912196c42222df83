"""Read one input file without trusting it: regular files only, never more bytes than a
document may hold, and a reason in one line for everything else (FIFOs, devices, sockets,
symlink loops, files too large — decided from `stat` before a byte is read)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

BYTES_PER_CHAR = 4  # the most any supported encoding (UTF-8, UTF-16, GB18030) spends on one character


class InputRefused(ValueError):
    """An input that is not read, with the reason as its message."""


def path_problem(path: Path) -> str | None:
    """Why `path` cannot be an input at all, or None when it exists."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symlink loop (the link points back to itself)"
        if exc.errno == errno.ENOENT:
            return "no such file or folder"
        return f"cannot read: {exc.strerror or exc}"
    return None


def max_bytes(max_chars: int) -> int:
    return max_chars * BYTES_PER_CHAR + 4  # + a byte-order mark


def read_bounded(path: Path, max_chars: int) -> bytes:
    """The bytes of the regular file `path`, reading at most what `max_chars` characters can take."""
    limit = max_bytes(max_chars)
    try:
        # O_NONBLOCK: should the path turn into a FIFO between the check and the open, open() must not hang.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputRefused(path_problem(path) or f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise InputRefused(f"not a regular file ({_kind(info.st_mode)}); only regular files are read")
        if info.st_size > limit:
            raise InputRefused(
                f"document too large: {info.st_size:,} bytes can hold more than the limit of "
                f"{max_chars:,} characters (build.max_document_chars); not read"
            )
        data = handle.read(limit + 1)
    if len(data) > limit:  # the file grew after the check
        raise InputRefused(
            f"document too large: more than {limit:,} bytes (build.max_document_chars); not read"
        )
    return data


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a file"
