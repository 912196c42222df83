"""Which Prefect server flow runs report to: the configured one (it must answer), one already running
at the local address, else a temporary one whose start-up is shown; runs reported to the temporary
server send no heartbeats, and its warm-up request never fails a run."""

from __future__ import annotations

import io
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import pytest
from prefect.settings import PREFECT_API_URL, get_current_settings, temporary_settings
from rich.console import Console

from flows import prefect_server
from flows.prefect_server import PrefectServer
from flows.runtime import Meter


class Answer(BaseHTTPRequestHandler):
    """`GET /api/health` answered with the handler's body (Prefect's is `true`)."""

    body = b"true"
    asked: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
        type(self).asked.append(self.path)
        status = 200 if self.path == "/api/health" else 404
        self.send_response(status)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def local_server(request: pytest.FixtureRequest) -> Iterator[str]:
    """An HTTP server on a free port answering health checks with the body the test names."""
    handler = type("Handler", (Answer,), {"body": getattr(request, "param", b"true"), "asked": []})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def fresh_process_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test as a new process: no server named or known to answer yet."""
    monkeypatch.setattr(prefect_server, "_announced", set())
    monkeypatch.setattr(prefect_server, "_answered", set())


def _free_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _lines() -> tuple[io.StringIO, Meter]:
    stream = io.StringIO()
    return stream, Meter("documents", 1, stream=stream, console=Console(file=stream, force_terminal=False))


class FakeTemporaryServer:
    """Prefect's temporary server as this module sees it, never started for real."""

    running = False
    server_process = None
    api_url = "http://127.0.0.1:8123/api"


def _no_temporary_server(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    started: list[object] = []
    monkeypatch.setattr(prefect_server, "_temporary_server", FakeTemporaryServer)
    monkeypatch.setattr(prefect_server, "_start", lambda server: started.append(server) or 4242)
    return started


def test_a_server_running_at_the_local_address_is_used_and_named_once(monkeypatch, local_server):
    monkeypatch.setenv(prefect_server.LOCAL_SERVER_VARIABLE, local_server)
    started = _no_temporary_server(monkeypatch)
    stream, meter = _lines()
    with temporary_settings(updates={PREFECT_API_URL: None}):
        first = prefect_server.choose_server(meter)
        again = prefect_server.choose_server(meter)
    assert first == again == PrefectServer("running", local_server)
    assert started == []
    assert stream.getvalue().splitlines() == [
        f"prefect: runs reported to the server running at {local_server}"
    ]


@pytest.mark.parametrize("local_server", [b"<html>not prefect</html>"], indirect=True)
def test_something_else_at_the_local_address_is_not_taken_for_prefect(monkeypatch, local_server):
    monkeypatch.setenv(prefect_server.LOCAL_SERVER_VARIABLE, local_server)
    started = _no_temporary_server(monkeypatch)
    with temporary_settings(updates={PREFECT_API_URL: None}):
        server = prefect_server.choose_server()
    assert server == PrefectServer("temporary", FakeTemporaryServer.api_url, 4242) and len(started) == 1


def test_an_empty_local_address_never_looks_for_a_running_server(monkeypatch):
    monkeypatch.setenv(prefect_server.LOCAL_SERVER_VARIABLE, "")
    monkeypatch.setattr(prefect_server, "is_prefect_server", lambda *a, **k: pytest.fail("looked"))
    _no_temporary_server(monkeypatch)
    with temporary_settings(updates={PREFECT_API_URL: None}):
        assert prefect_server.choose_server().kind == "temporary"


def test_the_local_address_defaults_to_where_prefect_server_start_listens():
    assert prefect_server.local_server_url({}) == "http://127.0.0.1:4200/api"
    assert prefect_server.local_server_url({prefect_server.LOCAL_SERVER_VARIABLE: " http://h:1/api/ "}) == (
        "http://h:1/api"
    )


def test_a_configured_server_that_answers_is_named(local_server):
    stream, meter = _lines()
    with temporary_settings(updates={PREFECT_API_URL: local_server}):
        server = prefect_server.choose_server(meter)
    assert server == PrefectServer("configured", local_server)
    assert stream.getvalue().splitlines() == [f"prefect: runs reported to {local_server} (PREFECT_API_URL)"]


def test_a_configured_server_that_does_not_answer_is_one_line_naming_the_ways_out(monkeypatch):
    started = _no_temporary_server(monkeypatch)
    url = f"http://127.0.0.1:{_free_port()}/api"
    with temporary_settings(updates={PREFECT_API_URL: url}):
        with pytest.raises(prefect_server.PrefectServerError) as raised:
            prefect_server.choose_server()
    message = str(raised.value)
    assert len(message.splitlines()) == 1 and url in message
    assert "PREFECT_API_URL" in message and "--no-prefect" in message
    assert started == []  # no temporary server behind the user's back


def test_the_temporary_servers_start_up_is_a_labelled_wait_with_its_time(monkeypatch):
    def slow_start(server) -> int:
        time.sleep(0.2)
        return 4242

    monkeypatch.setattr(prefect_server, "_temporary_server", FakeTemporaryServer)
    monkeypatch.setattr(prefect_server, "_start", slow_start)
    stream, meter = _lines()
    with temporary_settings(updates={PREFECT_API_URL: None}):
        assert prefect_server.reap_with_this_process(meter) == 4242
    lines = stream.getvalue().splitlines()
    assert lines[0] == f"[{prefect_server.WAIT_LABEL}]"
    ready = lines[-1]
    assert ready.startswith("prefect: temporary server ready in ") and "docs/operations.md" in ready
    seconds = float(ready.removeprefix("prefect: temporary server ready in ").split(" s", 1)[0])
    assert 0.2 <= seconds < 30


def _heartbeat_frequency():
    return get_current_settings().flows.heartbeat_frequency


def _api_url():
    return get_current_settings().api.url


def test_runs_reported_to_the_temporary_server_send_no_heartbeats(monkeypatch):
    temporary = PrefectServer("temporary", "http://127.0.0.1:8123/api", 4242)
    monkeypatch.setattr(prefect_server, "choose_server", lambda meter=None: temporary)
    before = _heartbeat_frequency()
    with prefect_server.reporting_to_server():
        assert _heartbeat_frequency() is None
    with prefect_server.reporting_to_server(workers=True):  # worker processes are told its URL
        assert _api_url() == temporary.url
    assert _heartbeat_frequency() == before and before is not None


def test_runs_reported_to_a_lasting_server_keep_their_heartbeats(monkeypatch):
    running = PrefectServer("running", "http://127.0.0.1:4200/api")
    monkeypatch.setattr(prefect_server, "choose_server", lambda meter=None: running)
    before, url = _heartbeat_frequency(), _api_url()
    with prefect_server.reporting_to_server():
        assert _heartbeat_frequency() == before and before is not None
        assert _api_url() == running.url  # found after Prefect read its settings: named to it here
    assert _api_url() == url


def test_the_warm_up_request_to_a_server_that_does_not_answer_is_not_an_error():
    assert prefect_server._first_answer(f"http://127.0.0.1:{_free_port()}/api") is None
