"""One bound on requests in flight per LLM server, shared by every client of the process.

Documents built at the same time, and the stages of each, submit all their items at once; the
requests wait here for one of the server's `[llm] concurrency` slots, so together they keep the
server as busy as the bound allows and never exceed it. Pools are keyed by (base URL, limit):
clients with the same settings share one, a one-slot check client gets its own. Each pool also
measures itself (slot-seconds in use, first and last activity) so a run can report achieved
concurrency from the client side.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
_POOLS: dict[tuple[str, int], "ServerPool"] = {}


class ServerPool:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.busy_slot_seconds = 0.0  # sum over requests of their time holding a slot
        self.first: float | None = None
        self.last: float | None = None

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the server's slots for the duration of a request."""
        with self._slots:
            started = time.monotonic()
            with self._lock:
                self.in_flight += 1
                self.peak = max(self.peak, self.in_flight)
                self.first = started if self.first is None else self.first
            try:
                yield
            finally:
                ended = time.monotonic()
                with self._lock:
                    self.in_flight -= 1
                    self.busy_slot_seconds += ended - started
                    self.last = ended

    def achieved(self) -> float:
        """Mean requests in flight from the first request to the last reply, divided by the limit."""
        if self.first is None or self.last is None or self.last <= self.first:
            return 0.0
        return self.busy_slot_seconds / ((self.last - self.first) * self.limit)


def server_pool(base_url: str, limit: int) -> ServerPool:
    """The process-wide pool of `base_url` for clients configured with `limit` requests in flight."""
    with _LOCK:
        pool = _POOLS.get((base_url, limit))
        if pool is None:
            pool = _POOLS[(base_url, limit)] = ServerPool(limit)
        return pool
