"""One bound on requests in flight per LLM server, shared by every client of the process.

Documents built at the same time, and the stages of each, submit all their items at once; the
requests wait here for one of the server's `[llm] concurrency` slots, so together they keep the
server as busy as the bound allows and never exceed it. Pools are keyed by (base URL, limit):
clients with the same settings share one, a one-slot check client gets its own. Each pool also
measures itself (slot-seconds in use, first and last activity) so a run can report achieved
concurrency from the client side.

A build whose documents run in worker processes shares the bound with them: `share_pool` puts
the pool's slots on an OS semaphore, passed to each worker as it is spawned (`adopt_pools`), so
all processes together still keep at most `limit` requests at the server.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

_LOCK = threading.Lock()
_POOLS: dict[tuple[str, int], "ServerPool"] = {}


class ServerPool:
    def __init__(self, limit: int, slots: Any = None) -> None:
        self.limit = limit
        # A thread semaphore, or a process-shared one (share_pool / adopt_pools).
        self._slots = slots if slots is not None else threading.BoundedSemaphore(limit)
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


class SpawnedSlots:
    """A process-shared semaphore that travels only to processes spawned from this one.

    Prefect pickles the task runner, worker start-up arguments included, into the context of every
    task it sends to a worker; an OS semaphore may only be pickled while a process is being spawned,
    so that copy carries nothing (the worker got the semaphore when it started)."""

    def __init__(self, semaphore: Any) -> None:
        self.semaphore = semaphore

    def __getstate__(self) -> dict[str, Any]:
        spawning = multiprocessing.context.get_spawning_popen() is not None
        return {"semaphore": self.semaphore if spawning else None}


# A pool's key and its process-shared slots: what a worker process needs to join the bound.
SharedPool = tuple[tuple[str, int], SpawnedSlots]


def share_pool(pool: ServerPool) -> SharedPool:
    """Put `pool`'s slots on a semaphore that worker processes spawned from here can adopt.

    Call it before any request is in flight (slots held on the old semaphore are not moved)."""
    with _LOCK:
        key = next((k for k, p in _POOLS.items() if p is pool), None)
        if key is None:
            raise ValueError("not a registered server pool")
        if isinstance(pool._slots, threading.BoundedSemaphore):
            pool._slots = multiprocessing.get_context("spawn").BoundedSemaphore(pool.limit)
        return key, SpawnedSlots(pool._slots)


def adopt_pools(shared: list[SharedPool]) -> None:
    """In a worker process: clients of these servers take their slots from the shared semaphores."""
    with _LOCK:
        for (base_url, limit), slots in shared:
            if slots.semaphore is not None:
                _POOLS[(base_url, limit)] = ServerPool(limit, slots.semaphore)
