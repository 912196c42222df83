"""What stands between the network and `nkw serve`'s app: which Host names are answered, how
large a request body may be, how long a client may take to send its request, and how many
connections may be open at once.

- Host: only the names and addresses the server is bound to (plus `localhost` and the loopback
  addresses when bound to loopback), so a web page whose DNS name is re-pointed at 127.0.0.1
  (DNS rebinding) gets 421, not answers. A request without Host gets 400.
- Body: refused with 413 from its Content-Length, before a byte of it is read; a body without
  a length (chunked) is counted as it arrives and refused at the same limit.
- Time: a request (head and body) must arrive within `read_timeout_s` of its first byte, or of
  the connection opening; a client that trickles or goes silent is disconnected.
- Connections: past `max_connections` open at once, a new connection is closed at once, so
  half-open connections never exhaust the process's file descriptors.

Every refusal is one log line (no traceback), at warning level.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
from typing import Any, Awaitable, Callable, Iterable

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from flows.log_lines import add_one_line

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX
    resource = None  # type: ignore[assignment]

log = logging.getLogger("uvicorn.error")  # beside uvicorn's own lines, in its format

MAX_BODY_BYTES = 128 * 1024  # a question and ten options, JSON-escaped, fit many times over
READ_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def is_wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::")


def allowed_hosts(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str] | None:
    """Host names a server bound to `bind_host` answers; None (any) for a wildcard bind."""
    if is_wildcard(bind_host):
        return None
    names = {bind_host.lower().strip("[]"), *(e.lower().strip("[]") for e in extra)}
    if is_loopback(bind_host):
        names.update(LOOPBACK_NAMES)
    return frozenset(names)


def host_name(header: str) -> str:
    """The name in a Host header, without port and IPv6 brackets, lower-cased."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[1 : header.find("]")] if "]" in header else header
    return header.rsplit(":", 1)[0] if header.count(":") == 1 else header


class RequestGuard:
    """ASGI middleware: Host allow-list and body limit; the bounded body is read here and replayed."""

    def __init__(self, app: Any, hosts: frozenset[str] | None, max_body_bytes: int = MAX_BODY_BYTES) -> None:
        self.app, self.hosts, self.max_body_bytes = app, hosts, max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        where = _where(scope)
        host = headers.get("host")
        if self.hosts is not None:
            if not host:
                await _refuse(send, 400, "a Host header is required", where)
                return
            if host_name(host) not in self.hosts:
                await _refuse(send, 421, f"this server does not answer for host {host[:100]!r}", where)
                return
        length = headers.get("content-length")
        if length is not None:
            if not length.strip().isdigit():
                await _refuse(send, 400, "invalid Content-Length", where)
                return
            if int(length) > self.max_body_bytes:
                await _refuse(send, 413, f"request body over {self.max_body_bytes} bytes", where)
                return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return  # the client is gone: nobody to answer
            body += message.get("body", b"")
            if len(body) > self.max_body_bytes:
                await _refuse(send, 413, f"request body over {self.max_body_bytes} bytes", where)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, _replay(bytes(body), receive), send)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _where(scope: Scope) -> str:
    client = scope.get("client") or ("?", 0)
    return f"{client[0]} {scope.get('method', '?')} {str(scope.get('path', '?'))[:100]}"


async def _refuse(send: Send, status: int, detail: str, where: str) -> None:
    log.warning("refused %s: %d %s", where, status, detail)
    body = json.dumps({"detail": detail}).encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def guarded_protocol(max_connections: int = MAX_CONNECTIONS, read_timeout_s: float = READ_TIMEOUT_S) -> type:
    """uvicorn's HTTP/1.1 protocol with a connection cap and a deadline on receiving each request."""

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            if len(self.connections) >= max_connections:
                peer = transport.get_extra_info("peername") or ("?",)
                log.warning(
                    "refused a connection from %s: %d connections already open", peer[0], max_connections
                )
                transport.abort()
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            if self.transport is None:  # refused in connection_made: nothing was set up
                return
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._deadline is None and self.conn.their_state is not h11.DONE:
                self._arm()  # the first byte of the next request on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
                self._disarm()  # the request is in: answering it may take as long as it takes

        def _arm(self) -> None:
            self._disarm()
            self._deadline = self.loop.call_later(read_timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.transport is None or self.transport.is_closing():
                return
            peer = self.client[0] if self.client else "?"
            log.warning("closed a connection from %s: request not received within %g s", peer, read_timeout_s)
            self.transport.abort()

    return GuardedH11Protocol


def quiet_tracebacks(names: Iterable[str] = ("asyncio", "uvicorn.error", "uvicorn")) -> None:
    """One line per record on the loggers that report connection-level errors (a flood of failed
    accepts must not fill the log with stack traces)."""
    loggers = [logging.getLogger(name) for name in names]
    add_one_line(loggers)
    add_one_line(h for logger in loggers for h in logger.handlers)


def make_server(
    app: Any,
    host: str,
    port: int,
    *,
    extra_hosts: Iterable[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
    max_connections: int = MAX_CONNECTIONS,
    read_timeout_s: float = READ_TIMEOUT_S,
    log_level: str = "warning",
) -> uvicorn.Server:
    """A uvicorn server for `app` with every guard of this module in place."""
    # Below the descriptor limit, so accept() never fails for want of one.
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0] if resource is not None else -1
    if soft != -1 and soft != getattr(resource, "RLIM_INFINITY", -1):
        max_connections = max(1, min(max_connections, soft - 128))
    guarded = RequestGuard(app, allowed_hosts(host, extra_hosts), max_body_bytes)
    config = uvicorn.Config(
        guarded,
        host=host,
        port=port,
        http=guarded_protocol(max_connections, read_timeout_s),
        log_level=log_level,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16 * 1024,  # request line and headers
    )
    quiet_tracebacks()  # after the config, which sets up uvicorn's log handlers
    return uvicorn.Server(config)
