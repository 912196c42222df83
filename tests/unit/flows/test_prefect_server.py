"""The temporary Prefect server's helpers: flows reporting to it send no heartbeats, and its
warm-up request never fails a run."""

from __future__ import annotations

import socket

from prefect.settings import get_current_settings

from flows import prefect_server


def _heartbeat_frequency():
    return get_current_settings().flows.heartbeat_frequency


def test_runs_reported_to_the_temporary_server_send_no_heartbeats(monkeypatch):
    monkeypatch.setattr(prefect_server, "reap_with_this_process", lambda: 4242)  # a temporary server
    before = _heartbeat_frequency()
    with prefect_server.without_heartbeats():
        assert _heartbeat_frequency() is None
    assert _heartbeat_frequency() == before and before is not None


def test_runs_reported_to_a_configured_server_keep_their_heartbeats(monkeypatch):
    monkeypatch.setattr(prefect_server, "reap_with_this_process", lambda: None)  # PREFECT_API_URL set
    before = _heartbeat_frequency()
    with prefect_server.without_heartbeats():
        assert _heartbeat_frequency() == before and before is not None


def test_the_warm_up_request_to_a_server_that_does_not_answer_is_not_an_error():
    with socket.socket() as probe:  # a port nothing listens on once the probe closes
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert prefect_server._first_answer(f"http://127.0.0.1:{port}/api") is None
