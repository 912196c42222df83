"""The lines of a JSONL input, one at a time and each of bounded length.

A line ends at a line feed and nowhere else: U+2028, form feeds or a lone carriage return may
sit inside a JSON string, and a file decoded whole and split with `str.splitlines` would cut
the record there. A file with a UTF-16 byte-order mark is decoded as a stream; any other file
is read as bytes, line by line, each line decoded on its own (UTF-8, else a fallback encoding),
so one odd line (a raw NUL byte, another encoding) costs that line, not the file.

No line is read past what a document may hold: a longer one is reported and skipped without
being kept (holes of a sparse file are jumped over, never read).
"""

from __future__ import annotations

import errno
import io
import os
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from tasks.ingest.ingest_documents import decode_bytes

WHOLE_FILE = -1  # offset of a line that can only be found by its number (UTF-16 files)
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
ESCAPED_CHAR_BYTES = 6  # `\uXXXX`: the most JSON spends on one character of a document
RECORD_OVERHEAD = 1 << 16  # the other fields of a record: title, ids, meta
SKIP_BLOCK = 1 << 20


@dataclass(frozen=True)
class Line:
    number: int
    offset: int  # byte offset of the line, or WHOLE_FILE
    text: str | None  # None when the line could not be read (see `problem`)
    encoding: str
    problem: str | None = None


def max_line_length(max_chars: int) -> int:
    return max_chars * ESCAPED_CHAR_BYTES + RECORD_OVERHEAD


def jsonl_lines(handle: BinaryIO, max_chars: int) -> Iterator[Line]:
    """Every line of an open JSONL file (blank lines included), in order."""
    head = handle.read(2)
    handle.seek(0)
    if head in UTF16_BOMS:
        yield from _utf16_lines(handle, max_line_length(max_chars))
    else:
        yield from byte_lines(handle, max_chars)


def byte_lines(handle: BinaryIO, max_chars: int, number: int = 0, offset: int = 0) -> Iterator[Line]:
    """Lines of a byte-oriented file from `offset` on (the handle is there), numbered after `number`."""
    limit = max_line_length(max_chars)
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number, start = number + 1, offset
        offset += len(raw)
        if len(raw) > limit and not raw.endswith(b"\n"):
            raw = b""  # not kept: the line is dropped whole
            offset += _skip_rest_of_line(handle)
            yield Line(number, start, None, "utf-8", _too_long(number, limit, "bytes"))
            continue
        text, encoding, problem = _decode_line(raw, first=start == 0)
        yield Line(number, start, text, encoding, problem and f"line {number}: {problem}")


def _utf16_lines(handle: BinaryIO, limit: int) -> Iterator[Line]:
    reader = io.TextIOWrapper(handle, encoding="utf-16", newline="\n")
    number = 0
    try:
        while True:
            try:
                text = reader.readline(limit + 1)
            except UnicodeDecodeError:
                yield Line(number + 1, WHOLE_FILE, None, "utf-16",
                           f"undecodable UTF-16 text from line {number + 1} on; the rest is not read")
                return
            if not text:
                return
            number += 1
            if len(text) > limit and not text.endswith("\n"):
                # A stream decoder cannot jump to the next line: the rest of the file goes unread.
                yield Line(number, WHOLE_FILE, None, "utf-16",
                           _too_long(number, limit, "characters") + "; the rest of the file is not read")
                return
            yield Line(number, WHOLE_FILE, text, "utf-16")
    finally:
        reader.detach()  # the caller owns (and closes) the handle


def _too_long(number: int, limit: int, unit: str) -> str:
    return (
        f"line {number} is longer than {limit:,} {unit}, more than a document may hold "
        "(build.max_document_chars); not read"
    )


def _skip_rest_of_line(handle: BinaryIO) -> int:
    """Move past the next line feed (or to the end); returns the bytes passed over."""
    start = handle.tell()
    while True:
        position = _next_data(handle, handle.tell())
        if position is None:
            handle.seek(0, os.SEEK_END)
            return handle.tell() - start
        handle.seek(position)
        block = handle.read(SKIP_BLOCK)
        if not block:
            return handle.tell() - start
        found = block.find(b"\n")
        if found >= 0:
            handle.seek(position + found + 1)
            return handle.tell() - start


def _next_data(handle: BinaryIO, position: int) -> int | None:
    """The first byte at or after `position` that is not in a hole (holes are zeros: no line feed)."""
    if not hasattr(os, "SEEK_DATA"):
        return position
    fd = handle.fileno()
    raw = os.lseek(fd, 0, os.SEEK_CUR)  # put back below: the buffered handle keeps its own account
    try:
        return os.lseek(fd, position, os.SEEK_DATA)
    except OSError as exc:
        return None if exc.errno == errno.ENXIO else position
    finally:
        os.lseek(fd, raw, os.SEEK_SET)


def _decode_line(raw: bytes, first: bool) -> tuple[str | None, str, str | None]:
    try:
        return raw.decode("utf-8-sig" if first else "utf-8"), "utf-8", None
    except UnicodeDecodeError:
        return decode_bytes(raw)
