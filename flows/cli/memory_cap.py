"""A temporary ceiling on the process's data memory (RLIMIT_DATA), for commands that run
user-controlled work (`nkw sql`): an allocation past it fails as MemoryError (or DuckDB's
out-of-memory error) instead of growing the process until the machine swaps."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX: no ceiling
    resource = None  # type: ignore[assignment]

UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


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


@contextmanager
def capped_memory(extra_bytes: int) -> Iterator[None]:
    """Allow at most `extra_bytes` more data memory inside the block (no ceiling where unsupported)."""
    previous = _set_ceiling(extra_bytes)
    try:
        yield
    finally:
        if previous is not None:
            resource.setrlimit(resource.RLIMIT_DATA, previous)
