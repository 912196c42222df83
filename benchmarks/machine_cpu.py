"""Machine-wide CPU use over a benchmark run, set against how busy the LLM server was.

The LLM benchmark asks why the server sat below its limit: because nothing upstream had a
request ready (the build's stages were waiting) or because the machine's cores were all taken
(every process, the build's workers, Prefect's server and the test server, working at once).
`/proc/stat` answers for the whole machine; where it is missing (not Linux) nothing is sampled.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

PROC_STAT = Path("/proc/stat")


def _busy_and_total() -> tuple[int, int] | None:
    """Jiffies the machine's CPUs spent busy and in all, since boot (None without /proc/stat)."""
    try:
        fields = [int(v) for v in PROC_STAT.read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and waiting for I/O
    return sum(fields) - idle, sum(fields)


class CpuSampler:
    """Samples the machine's busy cores every `every` seconds while in the `with` block:
    `samples` holds (monotonic time at the interval's middle, cores busy over the interval)."""

    def __init__(self, cores: int, every: float = 0.1) -> None:
        self.cores, self.every = cores, every
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-sampler", daemon=True)

    def __enter__(self) -> "CpuSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        before, then = _busy_and_total(), time.monotonic()
        while before is not None and not self._stop.wait(self.every):
            after, now = _busy_and_total(), time.monotonic()
            if after is None:
                return
            total = after[1] - before[1]
            if total > 0:
                self.samples.append(((then + now) / 2, self.cores * (after[0] - before[0]) / total))
            before, then = after, now


def cpu_by_server_load(
    samples: list[tuple[float, float]], busy: list[tuple[float, float]], limit: int
) -> dict[str, tuple[float, float]]:
    """Within the server's window (first arrival to last reply), seconds and mean busy cores of the
    samples at which the server held under half its limit of requests, and of those at which it
    held within one of the limit (samples in between are in neither)."""
    if not busy or not samples:
        return {}
    first, last = min(s for s, _ in busy), max(e for _, e in busy)
    groups: dict[str, list[float]] = {"under half its limit": [], "within one of its limit": []}
    for at, cores in samples:
        if not first <= at <= last:
            continue
        held = sum(1 for start, end in busy if start <= at < end)
        if held < limit / 2:
            groups["under half its limit"].append(cores)
        elif held >= limit - 1:
            groups["within one of its limit"].append(cores)
    step = (samples[-1][0] - samples[0][0]) / max(1, len(samples) - 1)
    return {name: (len(v) * step, sum(v) / len(v)) for name, v in groups.items() if v}
