"""`nkw serve` attacks over real sockets on 127.0.0.1: foreign Host names, oversized and endless
bodies, clients that trickle or go silent, floods of idle connections (static, and reopened as the
server closes them), malformed requests."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

from benchmarks.reliability.registry import REPO, Context, Outcome, case, setup

FAMILY = "serve"
READ_TIMEOUT_S = 10.0  # the server's default; a client held longer than this (plus slack) is a hang


@setup(FAMILY)
def _serve(ctx: Context):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    log = open(ctx.scratch / "serve.log", "w+")  # noqa: SIM115 - closed by the teardown
    args = ["serve", "-w", str(ctx.workspace), "--port", str(port), "--embeddings", "hashing"]
    process = subprocess.Popen(
        [sys.executable, "-m", "flows.cli.main", *args], cwd=REPO, env=ctx.env, stdout=log, stderr=log
    )
    deadline = time.monotonic() + 180
    while process.poll() is None and time.monotonic() < deadline:
        try:
            if _status(_get(port)) == 200:
                break
        except OSError:
            pass
        time.sleep(0.5)
    ctx.shared.update(port=port, serve_process=process, serve_log=log)

    def teardown() -> None:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()

    return teardown


def _exchange(port: int, data: bytes, timeout: float = 15.0) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(data)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        except (socket.timeout, ConnectionResetError):
            pass
    return b"".join(chunks)


def _get(port: int, path: str = "/health", host: str = "127.0.0.1") -> bytes:
    return _exchange(port, f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())


def _post(port: int, body: bytes, host: str = "127.0.0.1") -> bytes:
    head = (
        f"POST /ask HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    return _exchange(port, head.encode() + body, timeout=120)


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/") else 0


def _alive(ctx: Context) -> bool:
    return ctx.shared["serve_process"].poll() is None and _status(_get(ctx.shared["port"])) == 200


def _expect(ctx: Context, reply: bytes, statuses: set[int], escape_if: set[int] = frozenset()) -> Outcome:
    status = _status(reply)
    if status in escape_if:
        return Outcome(False, escape=True, note=f"answered {status}")
    if status >= 500 or status == 0:
        return Outcome(False, note=f"status {status}")
    if not _alive(ctx):
        return Outcome(False, note="the server stopped answering /health")
    return Outcome(status in statuses, note=f"status {status}")


@case(FAMILY)
def dns_rebinding_host(ctx: Context) -> Outcome:
    return _expect(ctx, _get(ctx.shared["port"], host="rebind.attacker.example"), {421}, escape_if={200})


@case(FAMILY)
def host_with_the_bound_address_as_prefix(ctx: Context) -> Outcome:
    return _expect(ctx, _get(ctx.shared["port"], host="127.0.0.1.attacker.example"), {421}, escape_if={200})


@case(FAMILY)
def documents_through_a_foreign_host(ctx: Context) -> Outcome:
    reply = _get(ctx.shared["port"], "/documents", host="evil.example")
    return _expect(ctx, reply, {421}, escape_if={200})


@case(FAMILY)
def http10_without_host(ctx: Context) -> Outcome:
    return _expect(
        ctx, _exchange(ctx.shared["port"], b"GET /health HTTP/1.0\r\n\r\n"), {400}, escape_if={200}
    )


@case(FAMILY)
def a_200_mb_content_length(ctx: Context) -> Outcome:
    head = b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 200000000\r\n\r\n"
    started = time.monotonic()
    reply = _exchange(ctx.shared["port"], head)  # the body never comes: refusal must not wait for it
    if time.monotonic() - started > 5:
        return Outcome(False, hang=True, note="waited for a body it should refuse")
    return _expect(ctx, reply, {413})


@case(FAMILY)
def an_endless_chunked_body(ctx: Context) -> Outcome:
    head = b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"10000\r\n" + b"x" * 65536 + b"\r\n"
    with socket.create_connection(("127.0.0.1", ctx.shared["port"]), timeout=15) as sock:
        sock.sendall(head)
        try:
            for _ in range(64):  # 4 MB, far past the limit
                sock.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass
        try:
            reply = sock.recv(65536)
        except (socket.timeout, ConnectionResetError):
            reply = b""
    return _expect(ctx, reply, {413})


def _held_for(port: int, trickle: bytes, limit: float) -> float | None:
    """Seconds until the server closed a connection fed `trickle` a byte every 0.5 s (None: never)."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(0.5)
        for index in range(10_000):
            if time.monotonic() - started > limit:
                return None
            try:
                sock.send(trickle[index % len(trickle) : index % len(trickle) + 1])
                if sock.recv(1) == b"":
                    return time.monotonic() - started
            except socket.timeout:
                continue
            except (BrokenPipeError, ConnectionResetError):
                return time.monotonic() - started
    return None


@case(FAMILY)
def a_header_sent_a_byte_at_a_time(ctx: Context) -> Outcome:
    held = _held_for(
        ctx.shared["port"], b"GET /health HTTP/1.1\r\nX-Slow: " + b"a" * 1000, READ_TIMEOUT_S + 20
    )
    if held is None:
        return Outcome(False, hang=True, note="the trickling client was never cut off")
    return Outcome(_alive(ctx), note=f"closed after {held:.1f} s")


@case(FAMILY)
def a_body_sent_a_byte_at_a_time(ctx: Context) -> Outcome:
    trickle = b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5000\r\n\r\n" + b"{" * 5000
    held = _held_for(ctx.shared["port"], trickle, READ_TIMEOUT_S + 20)
    if held is None:
        return Outcome(False, hang=True, note="the trickling client was never cut off")
    return Outcome(_alive(ctx), note=f"closed after {held:.1f} s")


@case(FAMILY)
def three_thousand_half_open_connections(ctx: Context) -> Outcome:
    socks = []
    try:
        for _ in range(3000):
            try:
                socks.append(socket.create_connection(("127.0.0.1", ctx.shared["port"]), timeout=5))
            except OSError:
                break  # our own descriptor limit: enough connections either way
        time.sleep(1)
    finally:
        for sock in socks:
            sock.close()
    time.sleep(1)
    return Outcome(_alive(ctx), note=f"{len(socks)} connections opened; /health answers afterwards")


@case(FAMILY)
def three_hundred_half_open_connections_reopened_as_closed(ctx: Context) -> Outcome:
    """The connection-level attack: one client keeps 300 half-open connections, reopening each one
    the server closes, while /health is asked every quarter second."""
    from tests.fixtures.slow_clients import HalfOpenFlood, health_while

    with HalfOpenFlood(ctx.shared["port"], count=300, seconds=15) as flood:
        time.sleep(2)
        answered, asked = health_while(ctx.shared["port"], 12, every_s=0.25)
    note = f"/health answered {answered} of {asked}; {flood.counts.closed_by_server} closed and reopened"
    return Outcome(answered == asked and _alive(ctx), note=note)


@case(FAMILY)
def garbage_request_line(ctx: Context) -> Outcome:
    return _expect(ctx, _exchange(ctx.shared["port"], b"\x00\xff GARBAGE\r\n\r\n"), {400})


@case(FAMILY)
def a_one_megabyte_header(ctx: Context) -> Outcome:
    request = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"a" * 1_000_000 + b"\r\n\r\n"
    return _expect(ctx, _exchange(ctx.shared["port"], request), {400, 431})


@case(FAMILY)
def malformed_json(ctx: Context) -> Outcome:
    return _expect(ctx, _post(ctx.shared["port"], b"{{{{"), {422})


@case(FAMILY)
def a_question_past_the_limit(ctx: Context) -> Outcome:
    return _expect(
        ctx, _post(ctx.shared["port"], json.dumps({"question": "why " * 5000}).encode()), {413, 422}
    )


@case(FAMILY)
def an_unknown_document(ctx: Context) -> Outcome:
    body = json.dumps({"question": "Who?", "doc": "../../etc/passwd"}).encode()
    return _expect(ctx, _post(ctx.shared["port"], body), {404})


@case(FAMILY)
def forty_questions_at_once(ctx: Context) -> Outcome:
    import concurrent.futures

    body = json.dumps({"question": "Who hides the brass key?"}).encode()
    with concurrent.futures.ThreadPoolExecutor(40) as pool:
        statuses = list(pool.map(lambda _: _status(_post(ctx.shared["port"], body)), range(40)))
    if any(s >= 500 and s != 503 or s == 0 for s in statuses):
        return Outcome(False, note=f"statuses {sorted(set(statuses))}")
    return Outcome(_alive(ctx) and 200 in statuses, note=f"statuses {sorted(set(statuses))}")


@case(FAMILY)
def the_server_log_after_every_attack(ctx: Context) -> Outcome:
    log = ctx.shared["serve_log"]
    log.flush()
    text = (ctx.scratch / "serve.log").read_text(errors="replace")
    if "Traceback" in text:
        return Outcome(False, traceback=True, note="the server log holds a traceback")
    return Outcome(True, note=f"{len(text.splitlines())} log lines, {len(text)} bytes")
