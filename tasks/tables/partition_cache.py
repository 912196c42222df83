"""Arrow tables of the Parquet partitions this process wrote or read whole, served again while
the file on disk is unchanged.

A document's stages read each other's tables again and again: one offline build of a screenplay
made 153 table reads, 18 of them of the one-row `documents` table, each decoding Parquet the build
had written moments before. A partition is kept here when it is written (the Arrow table that went
into the file) or read with all its columns, and is served while the file's identity — inode,
size, modification and change times — is the one it had then. Writes land by rename, so a
rewritten partition is a new inode and never served stale; `nkw remove` and invalidation delete
files, which no longer stat. Arrow tables are immutable, so one entry can be handed to several
stages at once.

The cache holds at most `MAX_BYTES` of Arrow buffers and forgets the least recently used first,
so a corpus build keeps roughly the documents it is working on.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from pathlib import Path

import pyarrow as pa

MAX_BYTES = 64 * 1024 * 1024  # every table of a 17,000-word screenplay: 13 MB of Arrow buffers

FileIdentity = tuple[int, int, int, int]


def file_identity(path: Path) -> FileIdentity | None:
    """What tells one version of a file from another; None when the file is gone."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)


class PartitionCache:
    """A bounded, thread-safe map of partition path → (file identity, Arrow table)."""

    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[FileIdentity, pa.Table]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def get(self, path: Path) -> pa.Table | None:
        """The table last kept for `path`, if the file is still the one it came from."""
        key = str(path)
        with self._lock:
            entry = self._entries.get(key)
        if entry is None:
            self.misses += 1
            return None
        if file_identity(path) != entry[0]:
            with self._lock:
                if self._entries.get(key) is entry:
                    self._drop(key)
            self.misses += 1
            return None
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
        self.hits += 1
        return entry[1]

    def put(self, path: Path, table: pa.Table, identity: FileIdentity | None = None) -> None:
        """Keep `table` as the contents of `path` as the file stands now (or as `identity` says)."""
        identity = identity or file_identity(path)
        size = table.nbytes
        if identity is None or size > self.max_bytes:
            return
        key = str(path)
        with self._lock:
            if key in self._entries:
                self._drop(key)
            self._entries[key] = (identity, table)
            self._bytes += size
            while self._bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    @property
    def size_bytes(self) -> int:
        return self._bytes

    def _drop(self, key: str) -> None:
        _, table = self._entries.pop(key)
        self._bytes -= table.nbytes


PARTITIONS = PartitionCache()  # one per process: stages of a build share it across threads
