"""deployments/vllm: serve.sh passes only flags checked with vLLM's own parser (verified_flags.txt),
never a removed one, and its context length holds NKW's largest request."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from schemas.config import Settings
from tasks.llm.requests.budget import largest_requests

VLLM = Path(__file__).resolve().parents[3] / "deployments" / "vllm"
REMOVED = {"--guided-decoding-backend"}  # gone since vLLM 0.12: the server refuses to start


def _verified() -> set[str]:
    lines = (VLLM / "verified_flags.txt").read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.startswith("#")}


def _env() -> dict[str, str]:
    values = {}
    for line in (VLLM / "vllm.env").read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Z_]+)=(.*)$", line)
        if match:
            values[match.group(1)] = match.group(2)
    return values


def _argv(tmp_path: Path, **env: str) -> list[str]:
    """The arguments serve.sh gives `vllm`, captured by a stand-in executable."""
    stand_in = tmp_path / "vllm"
    stand_in.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    stand_in.chmod(0o755)
    run = subprocess.run(
        ["bash", str(VLLM / "serve.sh")],
        env={**os.environ, "NKW_VLLM_BIN": str(stand_in), **env},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return json.loads(run.stdout)


def test_serve_sh_passes_only_verified_flags(tmp_path: Path) -> None:
    verified = _verified()
    assert verified and not verified & REMOVED
    for env in ({}, {"NKW_VLLM_API_KEY": "k"}):
        argv = _argv(tmp_path, **env)
        assert argv[:2] == ["serve", _env()["NKW_VLLM_MODEL"]]
        flags = {a for a in argv if a.startswith("--")}
        assert flags <= verified, flags - verified
    assert "--api-key" in _argv(tmp_path, NKW_VLLM_API_KEY="k") and "--api-key" not in _argv(tmp_path)


def test_serve_sh_names_no_flag_outside_the_verified_list() -> None:
    # Also the flags of branches the runs above did not take.
    written = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*(?:\.[a-z_]+)?", (VLLM / "serve.sh").read_text()))
    assert written and written <= _verified()


def test_tools_and_structured_outputs_are_configured_for_qwen(tmp_path: Path) -> None:
    argv = _argv(tmp_path)
    assert "--enable-auto-tool-choice" in argv
    assert argv[argv.index("--tool-call-parser") + 1] == "hermes"
    assert argv[argv.index("--structured-outputs-config.backend") + 1] == "auto"


def test_the_context_length_holds_the_largest_request_nkw_sends() -> None:
    context = int(_env()["NKW_VLLM_MAX_MODEL_LEN"])
    largest = largest_requests(Settings())
    assert largest[0].total <= context, largest[0]
    # The README states the figure; keep it in step with the settings.
    readme = (VLLM / "README.md").read_text(encoding="utf-8")
    assert f"{largest[0].total:,}" in readme and largest[0].stage in readme
