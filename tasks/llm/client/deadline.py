"""A total deadline for one HTTP request, enforced on every socket read and write.

httpx's `timeout` bounds each network operation, not the request: a server that sends one byte
a second (in its headers or its body) resets the read timeout with every byte and keeps a
request, and the build or `nkw ask` waiting on it, alive past every timeout and deadline.
Here each read, write and connect of a request is given at most what is left of the request's
total deadline, and none starts once it has passed. The deadline is per thread, because an
httpx.Client sends a synchronous request in the calling thread.
"""

from __future__ import annotations

import ssl
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator

import httpcore
import httpx

from tasks.llm.client.bounded_reply import bounded_http_client

# A chat reply of the largest completion we ask for, JSON-escaped (\uXXXX for every character),
# is a few MB at most; a /models list is kilobytes.
MAX_REPLY_BYTES = 16 * 1024 * 1024

_local = threading.local()


@contextmanager
def total_deadline(seconds: float) -> Iterator[None]:
    """Within: every network operation of this thread ends by `seconds` from now, all together."""
    previous = getattr(_local, "deadline", None)
    _local.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """The operation's timeout cut to what is left of the deadline; past it, `error`."""
    deadline = getattr(_local, "deadline", None)
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise error("the request's total deadline has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._stream.start_tls(ssl_context, server_hostname, _left(timeout, httpcore.ConnectTimeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's synchronous backend with every stream bounded by the thread's total deadline."""

    def __init__(self) -> None:
        self._backend = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._backend.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        bounded = _left(timeout, httpcore.ConnectTimeout)
        return _DeadlineStream(self._backend.connect_unix_socket(path, bounded, socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def deadline_http_client(
    limits: httpx.Limits, timeout: float | None = None, max_reply_bytes: int = MAX_REPLY_BYTES, **options: Any
) -> httpx.Client:
    """An httpx.Client whose requests honour `total_deadline` on every read and write, and whose
    replies are bounded by `max_reply_bytes` after decoding (tasks.llm.client.bounded_reply)."""
    transport = httpx.HTTPTransport(limits=limits)
    pool = getattr(transport, "_pool", None)
    if pool is not None and hasattr(pool, "_network_backend"):
        # httpx has no public hook for the backend; without it only httpx's per-read timeout applies.
        pool._network_backend = DeadlineBackend()
    return bounded_http_client(max_reply_bytes, timeout, limits, transport, **options)
