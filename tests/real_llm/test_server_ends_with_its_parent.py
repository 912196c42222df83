"""The local llama.cpp server ends with the process that started it, also when that process is
killed while a client is still being answered (a killed benchmark used to leave its server running,
orphaned, for as long as the evaluation it had started kept asking)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

REPO = Path(__file__).resolve().parents[2]
# The parent: starts the server, prints its port and pid, then waits to be killed.
PARENT = """
import json, sys, time
from tasks.llm.local.server import LocalServer, ServerOptions, free_port
options = ServerOptions(**json.loads(sys.argv[1]), port=free_port())
server = LocalServer(options, 300).start()
print(options.port, server.process.pid, flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_a_killed_parent_takes_its_server_along_with_a_request_in_flight() -> None:
    spec = os.environ.get("NKW_REAL_LLM_MODEL")
    if not spec:
        pytest.fail("NKW_REAL_LLM_MODEL must name a GGUF file (make check-llm sets it)")
    options = {"model_path": spec, "alias": "m", "context": 2048, "parallel": 1, "decode_threads": 1,
               "prompt_threads": 1}  # fmt: skip
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, json.dumps(options)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    port, child = (int(value) for value in parent.stdout.readline().split())
    body = {"messages": [{"role": "user", "content": "Count from 1 to 400 in words."}], "max_tokens": 1200}
    url = f"http://127.0.0.1:{port}/v1/chat/completions"
    with httpx.Client(timeout=120) as client:
        with client.stream("POST", url, json={**body, "stream": True}):
            time.sleep(1.0)  # the reply is being written
            parent.send_signal(signal.SIGKILL)
            parent.wait()
            deadline = time.monotonic() + 15
            while _alive(child) and time.monotonic() < deadline:
                time.sleep(0.2)
    gone = not _alive(child)
    if not gone:
        os.kill(child, signal.SIGKILL)
    assert gone, "the server outlived the process that started it"
