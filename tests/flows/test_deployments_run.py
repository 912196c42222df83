"""The deployments really run: a local Prefect server, `prefect deploy` of
deployments/prefect.yaml, a process worker, and each deployment run once against the
repository's test OpenAI server (LLM calls made, tables written)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tasks.tables.io import Workspace, read_frame
from tests.conftest import REPO, SAMPLES, SCREENPLAY
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

PREFECT = [sys.executable, "-m", "prefect"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_healthy(url: str, server: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, "prefect server exited"
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=5) as reply:
                if reply.status == 200:
                    return
        except OSError:
            time.sleep(1)
    raise AssertionError("prefect server did not become healthy")


def _run(args: list[str], env: dict[str, str], timeout: float = 600) -> str:
    done = subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args[2:5])}: {done.stdout[-1500:]} {done.stderr[-1500:]}"
    return done.stdout


def _run_deployment(name: str, params: dict, env: dict[str, str]) -> None:
    _run(PREFECT + ["deployment", "run", name, "--params", json.dumps(params)], env)
    # The worker runs the flow in a subprocess of its own and exits when the run is done.
    _run(PREFECT + ["worker", "start", "--pool", "nkw-local", "--run-once"], env, timeout=900)


@pytest.mark.slow
def test_deployments_run_with_the_llm_against_a_local_server(tmp_path):
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {
        **os.environ,
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_API_URL": api,
        "NKW_REPO_DIR": str(REPO),
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
        "PREFECT_LOGGING_LEVEL": "WARNING",
        "HF_HUB_OFFLINE": "1",
    }
    config = tmp_path / "test.toml"
    config.write_text('[embed_texts]\nbackend = "hashing"\n\n[llm]\ntimeout_s = 5.0\nmax_tokens = 256\n')
    workspace = Workspace.at(tmp_path / "ws")
    log = (tmp_path / "server.log").open("w")
    # The user's own server: none of the settings nkw gives the temporary servers it starts.
    server_env = {k: v for k, v in env.items() if not k.startswith("PREFECT_SERVER_SERVICES_")}
    server_env.pop("PREFECT_API_URL")
    server = subprocess.Popen(
        PREFECT + ["server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=server_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_healthy(api, server)
        _run(PREFECT + ["work-pool", "create", "nkw-local", "--type", "process"], env)
        _run(PREFECT + ["--no-prompt", "deploy", "--all", "--prefect-file", "deployments/prefect.yaml"], env)
        with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as llm:
            common = {
                "workspace": str(workspace.root),
                "config": str(config),
                "llm_url": llm.url,
                "model": TEST_MODEL,
            }
            _run_deployment(
                "build_corpus/nightly-corpus-rebuild", {**common, "paths": [str(SCREENPLAY)]}, env
            )
            built_requests = len(llm.chat_requests())
            questions = SAMPLES / "the_lighthouse_key.questions.jsonl"
            _run_deployment(
                "evaluate_benchmark/benchmark-evaluation",
                {**common, "questions": str(questions), "limit": 2},
                env,
            )
            asked_requests = len(llm.chat_requests()) - built_requests
        published = _published(api)
    finally:
        server.terminate()
        server.wait(timeout=60)
        log.close()
    assert built_requests > 20 and asked_requests > 0
    calls = read_frame(workspace, "llm_calls")
    assert (calls["model"] == TEST_MODEL).all() and calls["stage"].nunique() > 3
    assert len(read_frame(workspace, "episodes")) > 0 and len(read_frame(workspace, "entities")) > 0
    answers = read_frame(workspace, "qa_answers")
    assert len(answers) == 2 and not answers["is_offline"].any()
    # Each deployment run left what a user opens in the UI: its artifact and its summary line.
    (rebuild,) = published["nightly-corpus-rebuild"]
    assert rebuild["key"].startswith("nkw-build-ws-") and "| the_lighthouse_key |" in rebuild["data"]
    assert rebuild["logs"] and rebuild["logs"][0].startswith("nkw build complete:")
    (scores,) = published["benchmark-evaluation"]
    assert scores["data"].startswith("# Evaluation: nkw on the_lighthouse_key · ")
    run_id = answers["run_id"].iloc[0]
    assert run_id in scores["data"].splitlines()[0] and "| ALL |" in scores["data"]
    assert scores["logs"] and run_id in scores["logs"][0]


def _published(api: str) -> dict[str, list[dict]]:
    """Per deployment, the markdown artifacts on its flow runs and the runs' `nkw` log lines, read
    through Prefect's client as the UI reads them."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        DeploymentFilter,
        DeploymentFilterName,
        LogFilter,
        LogFilterFlowRunId,
    )
    from prefect.settings import PREFECT_API_URL, temporary_settings

    published: dict[str, list[dict]] = {}
    with temporary_settings(updates={PREFECT_API_URL: api}), get_client(sync_client=True) as client:
        for name in ("nightly-corpus-rebuild", "benchmark-evaluation"):
            deployment = DeploymentFilter(name=DeploymentFilterName(any_=[name]))
            published[name] = []
            for run in client.read_flow_runs(deployment_filter=deployment):
                logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[run.id])))
                on_run = ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[run.id]))
                for artifact in client.read_artifacts(artifact_filter=on_run):
                    if artifact.type == "markdown":
                        lines = [log.message for log in logs if log.name == "nkw"]
                        published[name].append({"key": artifact.key, "data": artifact.data, "logs": lines})
    return published
