"""`nkw llm check` and `nkw build --dry-run` from the command line."""

from __future__ import annotations

import json
import socket

from flows.cli.main import main
from tests.conftest import SAMPLES
from tests.fixtures.llm_fixtures import TEST_MODEL


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_llm_check_ok_and_clear_errors(capsys, fake_llm_server):
    assert main(["llm", "check", "--llm-url", fake_llm_server.url, "--model", TEST_MODEL]) == 0
    out = capsys.readouterr().out
    assert "ms" in out and TEST_MODEL in out
    assert main(["llm", "check", "--llm-url", fake_llm_server.url, "--model", "missing-model"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "missing-model" in err and err.count("\n") == 1
    assert (
        main(["llm", "check", "--llm-url", f"http://127.0.0.1:{_free_port()}/v1", "--model", TEST_MODEL]) == 1
    )
    err = capsys.readouterr().err
    assert err.startswith("error:") and err.count("\n") == 1 and "Traceback" not in err
    wrong_path = fake_llm_server.url.replace("/v1", "/nothing-here")
    assert main(["llm", "check", "--llm-url", wrong_path, "--model", TEST_MODEL]) == 1
    assert capsys.readouterr().err.startswith("error:")
    assert main(["llm", "check"]) == 2
    assert "--llm-url" in capsys.readouterr().err


def test_dry_run_estimates_without_writing(capsys, tmp_path):
    workspace = tmp_path / "ws"
    code = main(
        [
            "build",
            str(SAMPLES / "the_lighthouse_key.txt"),
            "-w",
            str(workspace),
            "--dry-run",
            "--json",
            "--llm-url",
            "http://127.0.0.1:9/v1",
            "--price-per-million",
            "2.0",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and not workspace.exists()
    assert report["corpus"]["documents"] == 1 and report["corpus"]["chunks"] >= 16
    for row in report["stages"]:
        assert row["calls"] is None or row["calls"] >= 0
    tokens = sum(
        r["prompt_tokens"] + r["completion_tokens"] for r in report["stages"] if r["calls"] is not None
    )
    assert report["cost"] == round(tokens / 1e6 * 2.0, 4) and report["cost"] > 0
