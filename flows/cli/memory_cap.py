"""A temporary ceiling on the process's data memory (RLIMIT_DATA), for commands that run
user-controlled work (`nkw sql`): an allocation past it fails as MemoryError (or DuckDB's
out-of-memory error) instead of growing the process until the machine swaps."""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from typing import Callable, Iterator

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX: no ceiling
    resource = None  # type: ignore[assignment]

UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
WATCH_INTERVAL_S = 0.01  # a process writing 5 GB/s overshoots by about 50 MB


def memory_bytes(text: str) -> int:
    """Bytes of a DuckDB-style size ('1GB', '512 MiB')."""
    match = re.fullmatch(r"\s*([0-9.]+)\s*([KMGT]?)(i?)B\s*", text)
    if not match:
        raise ValueError(f"invalid memory size {text!r} (e.g. '1GB')")
    number, unit, binary = match.groups()
    scale = 1024 ** "_KMGT".index(unit) if binary and unit else UNITS[unit]
    return int(float(number) * scale)


def use_system_allocator_for_arrow() -> None:
    """Call before anything allocates Arrow memory. Arrow's default pool (mimalloc) reserves a
    1 GiB arena on its first allocation, and pages inside a reservation are never checked against
    RLIMIT_DATA: a result could fill the arena past the ceiling unseen. The system allocator maps
    memory as it grows, so every mapping meets the ceiling."""
    import pyarrow

    pyarrow.set_memory_pool(pyarrow.system_memory_pool())


def _data_in_use() -> int:
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    raise OSError("VmData not reported")


def _set_ceiling(extra_bytes: int) -> tuple[int, int] | None:
    """Lower the soft RLIMIT_DATA to what is in use plus `extra_bytes`; the previous limits, or None."""
    if resource is None:
        return None
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
        ceiling = _data_in_use() + extra_bytes
        for limit in (soft, hard):
            if limit != resource.RLIM_INFINITY:
                ceiling = min(ceiling, limit)
        resource.setrlimit(resource.RLIMIT_DATA, (ceiling, hard))
    except (OSError, ValueError):  # no /proc, or the limit cannot be set: run without a ceiling
        return None
    return soft, hard


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm", encoding="ascii") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


class _ResidentWatch(threading.Thread):
    """Polls the process's resident memory and calls `on_exceeded` once it passes `limit`.

    RLIMIT_DATA is checked when memory is mapped, not when a page is first touched: glibc's
    per-thread arenas reserve their heaps inaccessible and open them with mprotect, which the
    limit never sees, so a query whose worker threads allocate can grow past the ceiling (2.6 GB
    seen against a 0.9 GB ceiling). Resident memory is what the machine pays, whoever allocated it."""

    def __init__(self, limit: int, on_exceeded: Callable[[], None], interval_s: float = WATCH_INTERVAL_S):
        super().__init__(name="memory-watch", daemon=True)
        self.limit, self.on_exceeded, self.interval_s = limit, on_exceeded, interval_s
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(self.interval_s):
            resident = _resident_bytes()
            if resident is not None and resident > self.limit:
                self.on_exceeded()
                return


@contextmanager
def capped_memory(extra_bytes: int, on_exceeded: Callable[[], None] | None = None) -> Iterator[None]:
    """Allow at most `extra_bytes` more data memory inside the block (no ceiling where unsupported);
    with `on_exceeded`, also call it when resident memory grows by more than `extra_bytes` (a command
    ends the process there: no allocator gets past that)."""
    previous = _set_ceiling(extra_bytes)
    resident = _resident_bytes() if on_exceeded is not None else None
    watch = None
    if resident is not None and on_exceeded is not None:
        watch = _ResidentWatch(resident + extra_bytes, on_exceeded)
        watch.start()
    try:
        yield
    finally:
        if watch is not None:
            watch.done.set()
        if previous is not None:
            resource.setrlimit(resource.RLIMIT_DATA, previous)
