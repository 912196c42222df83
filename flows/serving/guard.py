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
- Connections: up to `max_connections` open, a request may take `read_timeout_s` to arrive. Past
  that, the server is under pressure: new connections are still admitted, but a connection that
  has waited `pressure_timeout_s` for its request (half-open, or idle after an answer) is
  dropped, oldest first. A connection whose request is in and being answered is never dropped.
  At `max_open` (below the descriptor limit) the longest-waiting connection is dropped for each
  new one, and only when every one is being answered is a new connection closed at once. So a
  client holding hundreds of half-open connections and reopening each one closed keeps none
  for long, and a new client's request — which arrives as soon as it connects — is answered.
  Addresses do not help here: on loopback the attacker and every honest client share one.

Every refusal is one log line (no traceback), at warning level; connection-level ones at most
one line per second and kind, with the count since the last one.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import logging
import time
from collections import Counter, OrderedDict
from typing import Any, Awaitable, Callable, Iterable

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from flows.runtime import add_one_line
from flows.serving.console import AccessLog, AnnouncingServer

try:
    import resource
except ImportError:  # pragma: no cover - not on POSIX
    resource = None  # type: ignore[assignment]

log = logging.getLogger("uvicorn.error")  # beside uvicorn's own lines, in its format

MAX_BODY_BYTES = 128 * 1024  # a question and ten options, JSON-escaped, fit many times over
READ_TIMEOUT_S = 10.0
MAX_CONNECTIONS = 256
MAX_OPEN = 16 * MAX_CONNECTIONS  # the hard bound, when the descriptor limit allows it
PRESSURE_TIMEOUT_S = 1.0  # a local or LAN client sends its request head well within this
LOG_EVERY_S = 1.0  # connection-level warnings: one line per kind at most this often
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


class OncePerInterval:
    """Warnings that may come thousands of times a second (one per attacking connection), logged
    at most once per `interval_s` per message, with how many there were since the last line."""

    def __init__(self, interval_s: float = LOG_EVERY_S) -> None:
        self.interval_s = interval_s
        self.pending: Counter[str] = Counter()
        self.last: dict[str, float] = {}

    def warn(self, message: str) -> None:
        now = time.monotonic()
        self.pending[message] += 1
        if now - self.last.get(message, -self.interval_s) >= self.interval_s:
            count = self.pending.pop(message)
            log.warning("%s%s", message, f" ({count} times since the last such line)" if count > 1 else "")
            self.last[message] = now


def guarded_protocol(
    max_connections: int = MAX_CONNECTIONS,
    read_timeout_s: float = READ_TIMEOUT_S,
    max_open: int | None = None,
    pressure_timeout_s: float = PRESSURE_TIMEOUT_S,
) -> type:
    """uvicorn's HTTP/1.1 protocol with a deadline on receiving each request, shortened under
    pressure, and a hard bound on open connections (see the module docstring)."""
    hard = max(max_connections, max_open if max_open is not None else max_connections)
    warnings = OncePerInterval()
    # Connections not being answered, longest-waiting first (a connection moves to the end when
    # it begins waiting for a request): the front is what pressure and the hard bound drop.
    waiting: OrderedDict[GuardedH11Protocol, None] = OrderedDict()

    def shed(open_now: int) -> bool:
        """Under pressure drop the long-waiting; at the hard bound the longest-waiting. False: no room."""
        now = time.monotonic()
        for connection in list(waiting) if open_now >= max_connections else ():
            if now - connection._since < pressure_timeout_s:
                break
            if connection.is_waiting():
                connection._drop(f"waited {pressure_timeout_s:g} s for a request while the server is full")
                open_now -= 1
        if open_now < hard:
            return True
        oldest = next((c for c in waiting if c.is_waiting()), None)
        if oldest is None:
            return False
        oldest._drop("the longest-waiting connection, dropped to admit a new one")
        return True

    class GuardedH11Protocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None
        _since = 0.0  # when this connection began waiting for its current request
        _dropped = False
        _peer = "?"

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            self._peer = str((transport.get_extra_info("peername") or ("?",))[0])
            if not shed(len(self.connections)):
                warnings.warn(
                    f"refused a connection from {self._peer}: {hard} connections already open, "
                    "every one being answered"
                )
                transport.abort()
                return
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            waiting.pop(self, None)
            if self.transport is None:  # refused in connection_made: nothing was set up
                return
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            if self._deadline is None and self.conn.their_state is not h11.DONE:
                self._arm()  # the first byte of the next request on a kept-alive connection
            super().data_received(data)
            if self.conn.their_state in (h11.DONE, h11.MUST_CLOSE, h11.CLOSED, h11.ERROR):
                self._disarm()  # the request is in: answering it may take as long as it takes

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self._dropped:
                self._wait()  # idle until the next request: first in line when the server is full

        def is_waiting(self) -> bool:
            """True unless a request of this connection is in and being answered."""
            if self._dropped or self.transport is None:
                return False
            answering = self.cycle is not None and not self.cycle.response_complete
            return not (answering and self.conn.their_state is h11.DONE)

        def _wait(self) -> None:
            self._since = time.monotonic()
            waiting.pop(self, None)
            waiting[self] = None

        def _drop(self, why: str) -> None:
            warnings.warn(f"closed a connection from {self._peer}: {why}")
            self._dropped = True
            self._disarm()
            waiting.pop(self, None)
            if self.transport is not None and not self.transport.is_closing():
                self.transport.abort()

        def _arm(self) -> None:
            self._disarm()
            self._wait()
            self._deadline = self.loop.call_later(read_timeout_s, self._expire)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expire(self) -> None:
            self._deadline = None
            if self.transport is None or self.transport.is_closing():
                return
            self._drop(f"request not received within {read_timeout_s:g} s")

    return GuardedH11Protocol


def quiet_tracebacks(names: Iterable[str] = ("asyncio", "uvicorn.error", "uvicorn")) -> None:
    """One line per record on the loggers that report connection-level errors (a flood of failed
    accepts must not fill the log with stack traces)."""
    loggers = [logging.getLogger(name) for name in names]
    add_one_line(loggers)
    add_one_line(h for logger in loggers for h in logger.handlers)


def _descriptor_limit(wanted: int) -> int | None:
    """The soft descriptor limit, raised towards `wanted` within the hard one; None when unlimited."""
    if resource is None:
        return None
    unlimited = getattr(resource, "RLIM_INFINITY", -1)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != unlimited and soft < wanted:
        target = wanted if hard == unlimited else min(wanted, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (OSError, ValueError):
            pass
    return None if soft == unlimited else soft


def make_server(
    app: Any,
    host: str,
    port: int,
    *,
    extra_hosts: Iterable[str] = (),
    max_body_bytes: int = MAX_BODY_BYTES,
    max_connections: int = MAX_CONNECTIONS,
    read_timeout_s: float = READ_TIMEOUT_S,
    max_open: int = MAX_OPEN,
    pressure_timeout_s: float = PRESSURE_TIMEOUT_S,
    log_level: str = "warning",
    access_log: bool = False,
) -> uvicorn.Server:
    """A uvicorn server for `app` with every guard of this module in place; it prints its URL when
    ready and, with `access_log`, one line per request."""
    # Below the descriptor limit, so accept() never fails for want of one (raised, when the hard
    # limit allows, to what `max_open` connections need: a default soft limit of 1024 is common).
    soft = _descriptor_limit(max_open + 128)
    if soft is not None:
        max_connections = max(1, min(max_connections, soft - 128))
        max_open = max(1, min(max_open, soft - 128))
    guarded = RequestGuard(app, allowed_hosts(host, extra_hosts), max_body_bytes)
    config = uvicorn.Config(
        AccessLog(guarded) if access_log else guarded,  # outermost: the guard's refusals are logged too
        host=host,
        port=port,
        http=guarded_protocol(max_connections, read_timeout_s, max_open, pressure_timeout_s),
        log_level=log_level,
        timeout_keep_alive=5,
        h11_max_incomplete_event_size=16 * 1024,  # request line and headers
        access_log=False,  # ours (flows.serving.console) is one sanitized line with the time taken
    )
    quiet_tracebacks()  # after the config, which sets up uvicorn's log handlers
    return AnnouncingServer(config)
