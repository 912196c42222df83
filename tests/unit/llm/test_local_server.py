"""The local server's lifecycle with stand-in children (no model): ready, timeout, early exit, stop."""

from __future__ import annotations

import os
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tasks.llm.local import server as local_server
from tasks.llm.local.server import LocalServer, LocalServerError, ServerOptions, free_port, wait_until_ready

# A stand-in for llama.cpp's server: /v1/models as llama.cpp reports it, then serve until killed.
# It writes its pid, then the folder it was given for saved slots.
ANSWERING = """
import http.server, json, os, sys
open(sys.argv[2], "w").write(str(os.getpid()) + "\\n" + os.environ.get("NKW_LLAMA_SLOT_DIR", ""))
body = json.dumps({"data": [{"id": "m", "meta": {"n_ctx": 4096}}]}).encode()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/v1/models" else 404)
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""
SILENT = "import os, sys, time; open(sys.argv[2], 'w').write(str(os.getpid())); time.sleep(600)"
CRASHING = "import sys; print('error: unable to load model'); sys.exit(3)"


def _options(port: int) -> ServerOptions:
    return ServerOptions("model.gguf", "m", 4096, 1, 1, 2, port)


def _server(script: str, tmp_path: Path, timeout_s: float = 20.0) -> tuple[LocalServer, Path]:
    port, pid_file = free_port(), tmp_path / "child.pid"
    command = [sys.executable, "-c", script, str(port), str(pid_file)]
    return LocalServer(_options(port), timeout_s, command, tmp_path / "server.log"), pid_file


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_waiting_for_nothing_listening_ends_with_a_clear_error() -> None:
    started = time.monotonic()
    with pytest.raises(LocalServerError, match="did not answer within 1 s"):
        wait_until_ready(f"http://127.0.0.1:{free_port()}/v1", timeout_s=1.0, poll_s=0.1)
    assert time.monotonic() - started < 10


def test_the_server_answers_inside_and_is_stopped_on_exit(tmp_path: Path) -> None:
    server, pid_file = _server(ANSWERING, tmp_path)
    with server:
        with urllib.request.urlopen(f"{server.url}/models", timeout=5) as reply:
            assert reply.status == 200
        assert server.context_tokens() == 4096
        pid = int(pid_file.read_text().split()[0])
    assert _gone(pid)


def test_the_server_is_stopped_when_the_command_fails(tmp_path: Path) -> None:
    server, pid_file = _server(ANSWERING, tmp_path)
    with pytest.raises(RuntimeError):
        with server:
            pid = int(pid_file.read_text().split()[0])
            raise RuntimeError("the build failed")
    assert _gone(pid)


def test_a_server_that_never_answers_is_stopped_after_the_timeout(tmp_path: Path) -> None:
    server, pid_file = _server(SILENT, tmp_path, timeout_s=2.0)
    with pytest.raises(LocalServerError, match="did not answer within 2 s"):
        server.start()
    assert _gone(int(pid_file.read_text()))


def test_a_child_that_exits_while_starting_is_reported_with_its_log(tmp_path: Path) -> None:
    server, _ = _server(CRASHING, tmp_path)
    with pytest.raises(LocalServerError, match="exited while starting.*unable to load model"):
        server.start()


def test_ctrl_c_while_waiting_stops_the_child(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server, pid_file = _server(SILENT, tmp_path)

    def interrupted(*args, **kwargs):
        while not pid_file.exists():
            time.sleep(0.05)
        raise KeyboardInterrupt

    monkeypatch.setattr(local_server, "wait_until_ready", interrupted)
    with pytest.raises(KeyboardInterrupt):
        server.start()
    assert _gone(int(pid_file.read_text()))


def test_a_log_of_its_own_is_removed_when_the_server_stops(tmp_path: Path) -> None:
    port, pid_file = free_port(), tmp_path / "child.pid"
    server = LocalServer(_options(port), 20.0, [sys.executable, "-c", ANSWERING, str(port), str(pid_file)])
    with server:
        log = server.log_path
        assert log is not None and log.exists()
    assert not log.exists()


def test_the_server_gets_a_slot_folder_of_its_own_removed_when_it_stops(tmp_path: Path) -> None:
    server, pid_file = _server(ANSWERING, tmp_path)
    with server:
        slot_dir = Path(pid_file.read_text().split("\n")[1])
        assert slot_dir.is_dir() and slot_dir == Path(str(server.slot_dir))
        (slot_dir / "nkw-prefix-slot-0.bin").write_bytes(b"saved")  # as llama.cpp saves a slot
    assert not slot_dir.exists()


def test_a_command_that_cannot_start_leaves_no_files(tmp_path: Path) -> None:
    server = LocalServer(_options(free_port()), 5.0, [str(tmp_path / "no-such-program")])
    with pytest.raises(OSError):
        server.start()
    assert server.slot_dir is None and server.log_path is not None and not server.log_path.exists()
