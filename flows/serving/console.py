"""What `nkw serve` tells the person who started it: one ready line with the URL once it listens,
then one access-log line per request (method, path, status, milliseconds).

Request paths come from the network: every line goes through the terminal sanitizer, so a path
holding `ESC [ 2 J` cannot clear the operator's screen.
"""

from __future__ import annotations

import socket
import sys
import time
from typing import Any, Awaitable, Callable, TextIO

import uvicorn

from tasks.terminal import safe_text

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def url_of(host: str, port: int) -> str:
    """The URL a browser uses for a server bound to `host`:`port` (IPv6 in brackets)."""
    return f"http://[{host}]:{port}/" if ":" in host else f"http://{host}:{port}/"


def access_line(method: str, path: str, status: int | None, seconds: float) -> str:
    """`GET /documents 200 3 ms`: one request, made safe to print (the path is the client's text)."""
    shown = "-" if status is None else str(status)  # the client left before any reply started
    return safe_text(f"{method} {path} {shown} {seconds * 1000:.0f} ms", one_line=True)


class AccessLog:
    """ASGI middleware: one line per HTTP request on `stream` when its reply is done (or fails)."""

    def __init__(self, app: Any, stream: TextIO | None = None) -> None:
        self.app = app
        self.stream = stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status: list[int] = []

        async def send_and_note(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(int(message["status"]))
            await send(message)

        try:
            await self.app(scope, receive, send_and_note)
        except Exception:
            status.append(500)  # the server answers 500 for an error no handler caught
            raise
        finally:
            line = access_line(scope.get("method", "?"), scope.get("path", ""), (status or [None])[0],
                               time.perf_counter() - started)  # fmt: skip
            print(line, file=self.stream or sys.stderr, flush=True)


class AnnouncingServer(uvicorn.Server):
    """A uvicorn server that prints one ready line with its URL once every socket listens (after the
    app's start-up, which loads the documents): a port of 0 shows the port the system chose."""

    def __init__(self, config: uvicorn.Config, stream: TextIO | None = None) -> None:
        super().__init__(config)
        self.stream = stream
        self.url = ""

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if not self.started:  # start-up failed (a port in use): uvicorn has said why
            return
        bound = [s.getsockname() for server in self.servers for s in server.sockets or ()]
        port = bound[0][1] if bound else self.config.port
        self.url = url_of(self.config.host, port)
        print(
            f"nkw serve: ready at {self.url} (documents at /, API docs at {self.url}docs; Ctrl-C stops)",
            file=self.stream or sys.stdout,
            flush=True,
        )
