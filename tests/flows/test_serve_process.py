"""`nkw serve` as a person runs it, in a process of its own: one ready line with the URL once it
listens, `/` listing the documents, `/docs` with nothing to fetch from another site, and one access
log line per request, its path made safe for the terminal."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.conftest import REPO

READY = re.compile(r"^nkw serve: ready at (http://127\.0\.0\.1:(\d+)/) ")
EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", re.I)


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as reply:
            return reply.status, reply.read().decode("utf-8")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode("utf-8")


@pytest.fixture(scope="module")
def served(sample_workspace):
    """(the URL from the ready line, the process) of `nkw serve --port 0` over the samples."""
    workspace = str(sample_workspace.root)
    command = [
        sys.executable,
        "-m",
        "flows.cli.main",
        "serve",
        "-w",
        workspace,
        "--port",
        "0",
        "--embeddings",
        "hashing",
    ]
    env = {**os.environ, "PYTHONPATH": str(REPO), "NKW_API_KEY": "", "OPENAI_API_KEY": ""}
    process = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        line = process.stdout.readline()  # the first line, printed once every socket listens
        found = READY.match(line)
        assert found, (
            f"no ready line: {line!r}; stderr: {process.stderr.read() if process.poll() is not None else ''}"
        )
        yield found.group(1), process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def test_a_served_workspace_says_where_and_logs_each_request(served):
    url, process = served
    status, front = _get(url)
    assert status == 200
    assert '<a href="/view/the_lighthouse_key">the_lighthouse_key</a>' in front
    assert '<a href="/view/the_fisherman_and_his_wife">' in front
    status, docs = _get(url + "docs")
    assert status == 200 and "POST</span> /ask" in docs and not EXTERNAL.search(docs)
    assert _get(url + "view/the_lighthouse_key")[0] == 200
    assert _get(url + "%1b%5b2J")[0] == 404  # a path holding ESC [ 2 J
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    log = [line for line in err.splitlines() if re.fullmatch(r"(GET|POST) \S+ (\d{3}|-) \d+ ms", line)]
    assert [line.rsplit(" ", 2)[0] for line in log] == [
        "GET / 200",
        "GET /docs 200",
        "GET /view/the_lighthouse_key 200",
        "GET /\\x1b[2J 404",  # shown, not obeyed
    ]
    assert "\x1b" not in err
