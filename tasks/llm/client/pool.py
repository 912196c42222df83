"""One bound on requests in flight per LLM server, shared by every client of the process.

Documents built at the same time, and the stages of each, submit all their items at once; the
requests wait here for one of the server's `[llm] concurrency` slots, so together they keep the
server as busy as the bound allows and never exceed it. Pools are keyed by (base URL, limit):
clients with the same settings share one, a one-slot check client gets its own. Each pool also
measures itself (slot-seconds in use, first and last activity) so a run can report achieved
concurrency from the client side.

A build whose documents run in worker processes shares the bound with them: `sharing` starts a
Dispatcher (tasks.llm.client.dispatch) on the pool in the build's process, and each worker's clients of
that server hand their requests to it (`adopt_pools`), so all processes together keep at most
`limit` requests at the server, and the server's next request never waits for a busy worker.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack, contextmanager
from typing import Any, Iterator

import httpx

from tasks.llm.client.dispatch import DispatchAddress, DispatchClient, Dispatcher
from tasks.llm.client.http import ChatReply
from tasks.llm.client.pacing import Pacing
from tasks.llm.client.prefix_gate import PrefixGate
from tasks.llm.client.slot_copies import SlotCopies
from tasks.llm.client.streaming import send_chat

_LOCK = threading.Lock()
_POOLS: dict[tuple[str, int], "ServerPool"] = {}


class ServerPool:
    def __init__(self, limit: int, remote: DispatchClient | None = None) -> None:
        self.limit = limit
        self.remote = remote  # in a worker process: the build's Dispatcher sends this server's requests
        self.dispatcher: Dispatcher | None = None  # in the build's process, while workers share the pool
        self.sharers = 0  # builds sharing it with their workers (`sharing`)
        self._slots = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0
        self.busy_slot_seconds = 0.0  # sum over requests of their time holding a slot
        self.first: float | None = None
        self.last: float | None = None
        self.pacing = Pacing()  # the server's measured speed, which sizes every client's timeouts
        self.slots_read = False  # the server's own slot count asked once (`narrow`)
        self.learning = threading.Lock()  # requests wait while the first one asks it
        self.keeps_string_lengths = False  # llama.cpp (it answers /props): maxLength is sent along
        self.prefixes = PrefixGate()  # a stage's first request reads its instructions alone
        self.slot_copies = SlotCopies()  # llama.cpp: that prefix copied into the idle slots

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

    def post_chat(
        self,
        http: httpx.Client,
        base: str,
        headers: dict[str, str],
        payload: dict[str, Any],
        timeout: float,
        silence_s: float | None = None,
    ) -> ChatReply:
        """One chat request within the bound: sent from here, or by the build's process."""
        if self.remote is not None:
            return self.remote.post_chat(base, headers, payload, timeout, silence_s)
        return self.send(http, base, headers, payload, timeout, silence_s)

    def send(
        self,
        http: httpx.Client,
        base: str,
        headers: dict[str, str],
        payload: dict[str, Any],
        timeout: float,
        silence_s: float | None = None,
    ) -> ChatReply:
        """One chat request from this process: after the request that is reading its instructions
        (`PrefixGate`, waited for without a slot), within one of the server's slots. On llama.cpp
        with a slot save path, the request reading a new prefix has it read ahead and copied into
        the idle slots first (`SlotCopies`)."""
        with self.prefixes.turn(payload, silence_s or timeout) as turn, self.slot():
            primed = None
            if turn.first and self.limit > 1:
                primed = self.slot_copies.prime(http, base, headers, payload, timeout)
            if primed is not None:
                payload = primed.request(payload)
            reply = send_chat(http, base, headers, payload, timeout, silence_s, on_read=turn.read)
            return reply if primed is None else primed.reply(reply)

    def narrow(self, limit: int) -> None:
        """Fewer requests in flight from now on: a server with fewer slots than configured queues the
        rest, and a queued request is silent while it waits. The permits beyond `limit` are taken
        for good as they come free."""
        with self._lock:
            extra = self.limit - limit
            if limit < 1 or extra <= 0:
                return
            self.limit = limit
        for _ in range(extra):
            if not self._slots.acquire(blocking=False):  # held by a request: taken when it ends
                threading.Thread(target=self._slots.acquire, daemon=True, name="llm-narrow").start()

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


# A pool's key and where its requests go: what a worker process needs to join the bound.
SharedPool = tuple[tuple[str, int], DispatchAddress]


@contextmanager
def sharing(pool: ServerPool | None) -> Iterator[list[SharedPool]]:
    """Within: worker processes given the yielded list (`adopt_pools`) send their requests to
    `pool` through a Dispatcher in this process (one per pool, however many builds share it).
    Yields [] for no pool."""
    if pool is None:
        yield []
        return
    with _LOCK:
        key = next((k for k, p in _POOLS.items() if p is pool), None)
        if key is None:
            raise ValueError("not a registered server pool")
        if pool.dispatcher is None:
            pool.dispatcher = Dispatcher(pool.limit, pool.send)
        pool.sharers += 1
        address = pool.dispatcher.address
    try:
        yield [(key, address)]
    finally:
        with _LOCK:
            pool.sharers -= 1
            closing = pool.dispatcher if pool.sharers == 0 else None
            if closing is not None:
                pool.dispatcher = None
        if closing is not None:
            closing.close()


@contextmanager
def sharing_all(pools: list[ServerPool]) -> Iterator[list[SharedPool]]:
    """`sharing` for every server of a client (several with a routed client)."""
    with ExitStack() as stack:
        yield [entry for pool in pools for entry in stack.enter_context(sharing(pool))]


def adopt_pools(shared: list[SharedPool]) -> None:
    """In a worker process: clients of these servers send their requests to the build's process."""
    with _LOCK:
        for (base_url, limit), address in shared:
            _POOLS[(base_url, limit)] = ServerPool(limit, DispatchClient(address))
