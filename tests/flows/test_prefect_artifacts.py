"""Builds and evaluations leave a markdown artifact and a summary line on their Prefect flow run, read
back here through Prefect's client: the deployment flows on their own run, `nkw build` and `nkw eval`
on the run of the flow that did their documents."""

from __future__ import annotations

from uuid import UUID

import pytest

from flows.build_corpus import build_corpus
from flows.cli.main import main
from flows.evaluate_benchmark import evaluate_benchmark
from flows.prefect_artifacts import artifact_key
from tasks.tables.io import Workspace
from tests.conftest import SAMPLES, SCREENPLAY

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


def _artifacts_and_logs(flow_run_id: UUID) -> tuple[list, list[str]]:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        ArtifactFilter,
        ArtifactFilterFlowRunId,
        LogFilter,
        LogFilterFlowRunId,
    )

    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[flow_run_id]))
        )
        logs = client.read_logs(log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[flow_run_id])))
    return found, [log.message for log in logs if log.name == "nkw"]


def _by_key(key: str) -> tuple[object, str]:
    """The latest artifact of `key` and the name of the flow its run belongs to."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    with get_client(sync_client=True) as client:
        (latest,) = client.read_latest_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(any_=[key]))
        )
        run = client.read_flow_run(latest.flow_run_id)
        flow = client.read_flow(run.flow_id)
    return latest, flow.name


@pytest.fixture()
def config(tmp_path):
    path = tmp_path / "test.toml"
    path.write_text('[embed_texts]\nbackend = "hashing"\n')
    return path


@pytest.mark.slow
def test_the_deployment_flows_publish_on_their_own_runs(tmp_path, config, prefect_harness):
    workspace = Workspace.at(tmp_path / "corpus")
    built = build_corpus([str(SCREENPLAY)], str(workspace.root), config=str(config), return_state=True)
    summary = built.result()
    found, lines = _artifacts_and_logs(built.state_details.flow_run_id)
    (artifact,) = found
    assert artifact.type == "markdown" and artifact.key == artifact_key("build", "corpus", workspace.root)
    row = next(line for line in artifact.data.splitlines() if line.startswith("| the_lighthouse_key |"))
    assert row.split("|")[2].strip() == str(summary["built"])  # the built column, as the run returned it
    assert lines == [next(line for line in lines if line.startswith("nkw build complete:"))]
    assert f"{summary['built']} stage runs built" in lines[0]

    scored = evaluate_benchmark(
        str(QUESTIONS), str(workspace.root), config=str(config), limit=2, return_state=True
    )
    result = scored.result()
    found, lines = _artifacts_and_logs(scored.state_details.flow_run_id)
    (artifact,) = [a for a in found if a.key.startswith("nkw-eval-")]
    heading = artifact.data.splitlines()[0]
    assert heading.startswith("# Evaluation: nkw on the_lighthouse_key · offline · ")
    assert heading.endswith(result["run_id"])  # the scores under the run's label
    everything = next(line for line in artifact.data.splitlines() if line.startswith("| ALL |"))
    assert everything.split("|")[2].strip() == str(result["n_questions"])
    assert len(lines) == 1 and lines[0].startswith("nkw eval nkw on the_lighthouse_key")


@pytest.mark.slow
def test_nkw_build_and_eval_publish_on_the_runs_of_their_document_flows(tmp_path, prefect_harness, capsys):
    workspace = Workspace.at(tmp_path / "ws")
    assert main(["build", str(SCREENPLAY), "-w", str(workspace.root), "--embeddings", "hashing", "-q"]) == 0
    artifact, flow = _by_key(artifact_key("build", "ws", workspace.root))
    assert flow == "build_documents" and "| the_lighthouse_key |" in artifact.data
    assert main(["build", str(SCREENPLAY), "-w", str(workspace.root), "--embeddings", "hashing", "-q"]) == 0
    again, _ = _by_key(artifact_key("build", "ws", workspace.root))
    assert again.id == artifact.id  # nothing to build: no flow ran, no server was asked, nothing new

    capsys.readouterr()
    args = ["eval", "-w", str(workspace.root), "--questions", str(QUESTIONS), "--limit", "2", "--json"]
    assert main(args) == 0  # the query embedder is the build's (hashing), read from the bundle
    artifact, flow = _by_key(artifact_key("eval", "the_lighthouse_key-nkw", workspace.root))
    assert flow == "answer_documents" and "| ALL |" in artifact.data
