"""One queue of LLM requests per server for a build whose documents run in worker processes.

Each worker used to send its own requests, holding one of the server's slots (a process-shared
semaphore) from before the send until its thread had read the reply. A thread needs its
process's interpreter lock for both, and a worker's own CPU work (grounding replies, building
prompts, a garbage collection) holds that lock for tens to hundreds of milliseconds, so a slot
stayed taken while the server had nothing to do: on the three STAGE dev screenplays the workers
held all 16 slots for most of the build while the server held 13-14 requests on average.

Here the process that started the build sends every worker's requests: `limit` threads take
the next request from one queue, so the server gets its next request as soon as a reply is in,
whatever the workers are doing. Workers hand their requests over a local authenticated socket
(`multiprocessing.connection`) and get back the reply, or the HTTPCallError a direct request
would have raised.
"""

from __future__ import annotations

import itertools
import os
import queue
import socket
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass
from multiprocessing import AuthenticationError
from multiprocessing.connection import Client, Connection, Listener
from typing import Any, Callable

import httpx

from tasks.llm.client.deadline import deadline_http_client
from tasks.llm.client.http import ChatReply, HTTPCallError

# (request id, base URL, headers, payload, timeout, silence) one way; (request id, "ok", ChatReply) or
# (request id, "error", (kind, message, http status, retry after)) back.
Request = tuple[int, str, dict[str, str], dict[str, Any], float, float | None]
CLOSE_WAIT_S = 5.0  # how long closing waits for the sending threads, all together
# What sends one request from this process (ServerPool.send): client, base, headers, payload,
# timeout, silence.
Send = Callable[[httpx.Client, str, dict[str, str], dict[str, Any], float, float | None], ChatReply]
GONE = "the build's request queue is gone"  # a retryable 'connect' failure, as a dropped connection is


@dataclass(frozen=True)
class DispatchAddress:
    """Where a worker hands its requests: a socket path and the key that proves it was invited."""

    address: str
    authkey: bytes


class Dispatcher:
    """In the build's process: takes requests from worker connections and sends them `limit` at a
    time, each with `send` (the pool's: its bound, its measurements and its prefix gate)."""

    def __init__(self, limit: int, send: Send) -> None:
        self.limit, self._send_one = limit, send
        authkey = os.urandom(32)
        self._listener = Listener(family="AF_UNIX", authkey=authkey)
        self.address = DispatchAddress(self._listener.address, authkey)
        self._queue: queue.SimpleQueue[tuple[Connection, threading.Lock, Request] | None] = (
            queue.SimpleQueue()
        )
        self._http = deadline_http_client(
            httpx.Limits(max_connections=limit + 4, max_keepalive_connections=limit)
        )
        self._closed = threading.Event()
        self._connections: list[tuple[Connection, threading.Lock]] = []
        self._threads = [threading.Thread(target=self._accept, name="llm-dispatch-accept", daemon=True)]
        self._threads += [
            threading.Thread(target=self._send, name=f"llm-dispatch-{n}", daemon=True) for n in range(limit)
        ]
        for thread in self._threads:
            thread.start()

    def close(self) -> None:
        """Stop accepting and sending; requests still queued get a 'connect' error."""
        self._closed.set()
        try:  # wake the accepting thread: closing the socket does not interrupt its accept()
            with socket.socket(socket.AF_UNIX) as wake:
                wake.connect(self.address.address)
        except OSError:
            pass
        self._listener.close()
        for connection, lock in list(self._connections):
            with lock:  # its reading thread closes it under this lock once it sees the end
                _hang_up(connection)
        for _ in range(self.limit):
            self._queue.put(None)
        deadline = time.monotonic() + CLOSE_WAIT_S  # a request still at the server is not waited for
        for thread in self._threads[1:]:
            thread.join(timeout=max(0.0, deadline - time.monotonic()))
        self._http.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection = self._listener.accept()
            except OSError:  # closed
                return
            except Exception:  # noqa: BLE001 - a caller without the key: refuse it, keep serving
                continue
            lock = threading.Lock()  # replies to one worker are sent by several threads
            self._connections.append((connection, lock))
            threading.Thread(target=self._read, args=(connection, lock), daemon=True).start()

    def _read(self, connection: Connection, lock: threading.Lock) -> None:
        while True:
            try:
                request = connection.recv()
            except (EOFError, OSError):  # the worker is gone, or the build ended
                with lock:
                    connection.close()
                return
            self._queue.put((connection, lock, request))

    def _send(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            connection, lock, (request_id, base, headers, payload, timeout, silence_s) = item
            if self._closed.is_set():
                answer: tuple[str, Any] = ("error", ("connect", GONE, None, None))
            else:
                try:
                    answer = ("ok", self._send_one(self._http, base, headers, payload, timeout, silence_s))
                except HTTPCallError as exc:
                    answer = ("error", (exc.kind, str(exc), exc.http_status, exc.retry_after))
                except Exception as exc:  # noqa: BLE001 - it reaches the request's own stage as a failure
                    answer = ("error", ("protocol", f"{type(exc).__name__}: {exc}", None, None))
            try:
                with lock:
                    connection.send((request_id, *answer))
            except (OSError, ValueError):  # the worker is gone; nobody waits for this reply
                pass


class DispatchClient:
    """In a worker: sends requests to the build's Dispatcher and waits for their answers."""

    def __init__(self, address: DispatchAddress) -> None:
        self._address = address
        self._lock = threading.Lock()
        self._connection: Connection | None = None
        self._pending: dict[int, tuple[Connection, Future]] = {}
        self._ids = itertools.count()

    def post_chat(
        self,
        base: str,
        headers: dict[str, str],
        payload: dict[str, Any],
        timeout: float,
        silence_s: float | None = None,
    ) -> ChatReply:
        """What `tasks.llm.client.streaming.send_chat` returns or raises, sent by the build's process."""
        answer: Future = Future()
        with self._lock:
            connection = self._connected()
            request_id = next(self._ids)
            self._pending[request_id] = (connection, answer)
            try:
                connection.send((request_id, base, headers, payload, timeout, silence_s))
            except (OSError, ValueError) as exc:
                del self._pending[request_id]
                self._connection = None
                raise HTTPCallError("connect", f"{GONE} ({type(exc).__name__})") from None
        kind, value = answer.result()
        if kind == "ok":
            return value
        raise HTTPCallError(*value)

    def _connected(self) -> Connection:
        if self._connection is None:
            try:
                connection = Client(self._address.address, family="AF_UNIX", authkey=self._address.authkey)
            except (OSError, EOFError, AuthenticationError) as exc:
                raise HTTPCallError("connect", f"{GONE} ({type(exc).__name__})") from None
            threading.Thread(
                target=self._receive, args=(connection,), name="llm-dispatch-replies", daemon=True
            ).start()
            self._connection = connection
        return self._connection

    def _receive(self, connection: Connection) -> None:
        while True:
            try:
                request_id, kind, value = connection.recv()
            except (EOFError, OSError):
                break
            with self._lock:
                _, answer = self._pending.pop(request_id, (None, None))
            if answer is not None:
                answer.set_result((kind, value))
        with self._lock:
            connection.close()
            if self._connection is connection:
                self._connection = None
            lost = [rid for rid, (sent_on, _) in self._pending.items() if sent_on is connection]
            answers = [self._pending.pop(rid)[1] for rid in lost]
        for answer in answers:
            answer.set_result(("error", ("connect", GONE, None, None)))


def _hang_up(connection: Connection) -> None:
    """End a connection for both sides, waking a thread blocked reading it (closing alone does not)."""
    try:
        end = socket.socket(fileno=connection.fileno())
    except OSError:  # already closed
        return
    try:
        end.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        end.detach()  # the connection still owns the descriptor
