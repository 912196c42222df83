"""`nkw llm fetch` and `nkw llm local` from the command line, without a real model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

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


def test_a_missing_or_foreign_model_file_is_one_line_and_exit_2(capsys, tmp_path):
    assert main(["llm", "local", "--model", str(tmp_path / "none.gguf")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no such model file") and err.count("\n") == 1
    foreign = tmp_path / "notes.txt"
    foreign.write_text("not a model")
    assert main(["llm", "fetch", "--model", str(foreign)]) == 2
    assert "GGUF magic" in capsys.readouterr().err


def test_server_options_obey_the_configs_bounds(capsys, tmp_path):
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
