"""`nkw llm fetch` and `nkw llm local` from the command line, without a real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from flows.cli.main import main

REPO = Path(__file__).resolve().parents[2]


def _gguf(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.gguf"
    path.write_bytes(b"GGUF" + b"\x00" * 32)  # the magic, then nothing a server could load
    return path


def test_fetch_of_a_users_gguf_file_prints_its_path(capsys, tmp_path):
    path = _gguf(tmp_path)
    assert main(["llm", "fetch", "--model", str(path), "--cache-dir", str(tmp_path / "cache")]) == 0
    assert capsys.readouterr().out.strip() == str(path)
    assert not (tmp_path / "cache").exists()  # a user's file is served where it is
    assert main(["llm", "fetch", "--model", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"path": str(path), "model": "tiny", "pinned": False}


def test_a_missing_or_foreign_model_file_is_one_line_and_exit_2(capsys, tmp_path):
    assert main(["llm", "local", "--model", str(tmp_path / "none.gguf")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no such model file") and err.count("\n") == 1
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a model")
    assert main(["llm", "fetch", "--model", str(foreign)]) == 2
    assert "GGUF magic" in capsys.readouterr().err


@pytest.mark.parametrize("installed", [True, False])
def test_server_options_obey_the_configs_bounds(capsys, tmp_path, monkeypatch, installed):
    from flows.cli.commands import llm_local

    monkeypatch.setattr(llm_local, "xllamacpp_installed", lambda: installed)
    assert main(["llm", "local", "--model", str(_gguf(tmp_path)), "--context", "10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: invalid server option") and "context" in err


def test_a_model_the_server_cannot_load_ends_with_one_error_line_and_no_child(tmp_path):
    config = tmp_path / "nkw.toml"
    config.write_text("[local_llm]\nstartup_timeout_s = 120\n")
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", "llm", "local", "--model", str(_gguf(tmp_path)),
         "--config", str(config)],
        cwd=REPO, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode in (1, 2), done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and "Traceback" not in done.stderr
    if done.returncode == 1:  # xllamacpp is installed: the child started, failed to load and is gone
        assert "exited while starting" in last
        children = subprocess.run(
            ["pgrep", "-f", str(tmp_path)], capture_output=True, text=True
        ).stdout.split()
        assert [pid for pid in children if int(pid) != os.getpid()] == []


# Stands in for llama.cpp's server: answers /v1/models until it is stopped.
FAKE_SERVER = """
import http.server, json, os, sys
open(sys.argv[2], "w").write(str(os.getpid()))
body = json.dumps({"data": [{"id": "tiny", "meta": {"n_ctx": 4096}}]}).encode()
class Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
"""


def test_local_llm_serves_for_one_command_and_stops_after_it(capsys, tmp_path, monkeypatch):
    from flows.cli.commands import llm_local
    from tasks.llm.local import server as local_server

    pid_file = tmp_path / "server.pid"
    monkeypatch.setattr(llm_local, "xllamacpp_installed", lambda: True)
    monkeypatch.setattr(
        local_server,
        "child_command",
        lambda options: [sys.executable, "-c", FAKE_SERVER, str(options.port), str(pid_file)],
    )
    screenplay = REPO / "tests" / "fixtures" / "real_llm" / "the_ferry_ticket.txt"
    args = [
        "build",
        str(screenplay),
        "-w",
        str(tmp_path / "ws"),
        "--dry-run",
        "--local-llm",
        str(_gguf(tmp_path)),
    ]
    from flows.cli.commands import build as build_command
    from flows.cli.commands.common import settings_from

    seen = []
    real_run = build_command.run
    monkeypatch.setattr(build_command, "run", lambda a: seen.append(settings_from(a).llm) or real_run(a))
    assert main(args) == 0
    out = capsys.readouterr().out
    extraction = next(line for line in out.splitlines() if line.startswith("extract_graph"))
    assert int(extraction.split()[1]) >= 1  # planned as LLM calls: the command saw the server's URL
    # The server NKW starts is llama.cpp with llguidance: the schema goes as its grammar.
    assert [(s.url.startswith("http://127.0.0.1:"), s.grammar) for s in seen] == [(True, "llguidance")]
    pid = int(pid_file.read_text())
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive  # stopped with the command


def test_local_llm_names_its_own_server(capsys, tmp_path):
    args = ["ask", "q?", "-w", str(tmp_path), "--local-llm", "--llm-url", "http://127.0.0.1:1/v1"]
    assert main(args) == 2
    assert "drop --llm-url" in capsys.readouterr().err


def test_the_shipped_local_settings_load_and_match_the_servers_slots():
    from schemas.config import load_settings

    for path in (
        REPO / "deployments" / "config" / "local_model.toml",
        REPO / "tests" / "real_llm" / "check_llm.toml",
    ):
        settings = load_settings(path)
        # More requests in flight than slots would wait at the server inside their own timeout.
        assert settings.llm.concurrency == settings.local_llm.parallel, path
        assert settings.local_llm.decode_threads == 1 and settings.llm.timeout_s >= 600, path
