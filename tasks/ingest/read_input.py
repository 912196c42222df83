"""Read one input file without trusting it: regular files only, never more bytes than a
document may hold, and a reason in one line for everything else (FIFOs, devices, sockets,
symlink loops, files too large — decided from `stat` before a byte is read)."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO

from tasks.files import kind

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


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading if it is a regular file; InputRefused (nothing read) otherwise."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it would hang the build).
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputRefused(path_problem(path) or f"cannot read: {exc.strerror or exc}") from None
    handle = os.fdopen(fd, "rb")
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        handle.close()
        raise InputRefused(f"not a regular file ({kind(mode)}); only regular files are read")
    return handle


def read_small_file(path: Path, limit: int, what: str) -> bytes:
    """The bytes of the regular file `path` if it holds at most `limit` bytes (questions files)."""
    with open_regular(path) as handle:
        size = os.fstat(handle.fileno()).st_size
        if size > limit:
            raise InputRefused(f"{what} too large: {size:,} bytes > {limit:,}; not read")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputRefused(f"{what} too large: more than {limit:,} bytes; not read")
    return data


def read_text_lines(path: Path, limit: int, what: str) -> list[str]:
    """The lines of a small text file (UTF-8, or UTF-16 with a byte-order mark), split at line feeds
    only (U+2028 may sit inside a JSON string); InputRefused or UnicodeDecodeError when unreadable."""
    data = read_small_file(path, limit, what)
    text = data.decode("utf-16") if data.startswith((b"\xff\xfe", b"\xfe\xff")) else data.decode("utf-8-sig")
    return [line.removesuffix("\r") for line in text.split("\n")]


def read_bounded(path: Path, max_chars: int) -> bytes:
    """The bytes of the regular file `path`, reading at most what `max_chars` characters can take."""
    limit = max_bytes(max_chars)
    with open_regular(path) as handle:
        info = os.fstat(handle.fileno())
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
