"""Corpus scale under Prefect: flows carry references (paths, doc ids, hashes), never text, so
a corpus over 1 MB builds and an evaluation of more than 1,500 questions runs as flow runs."""

from __future__ import annotations

import json

import pytest
from prefect import get_client
from prefect.client.schemas.filters import FlowFilter, FlowFilterName

from flows.build_corpus import build_with_prefect
from flows.evaluate_benchmark import evaluate_with_prefect
from flows.stages import select_stages
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SAMPLES, SCREENPLAY, STORY

PARAMETER_LIMIT = 524_288  # what a Prefect server accepts per flow run


def write_repeated_corpus(path, min_bytes: int, repeat: int = 4) -> int:
    """The bundled samples repeated under new doc ids until the JSONL file is over `min_bytes`
    (each document is a sample's text `repeat` times, so there are fewer, longer documents)."""
    samples = [(p.stem, "\n\n".join([p.read_text(encoding="utf-8")] * repeat)) for p in (SCREENPLAY, STORY)]
    written = copies = 0
    with path.open("w", encoding="utf-8") as out:
        while written <= min_bytes:
            for stem, text in samples:
                line = json.dumps({"doc_id": f"{stem}-copy{copies:03d}", "title": stem, "text": text}) + "\n"
                out.write(line)
                written += len(line.encode("utf-8"))
            copies += 1
    return written


def flow_run_parameter_bytes(flow_name: str) -> list[int]:
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])))
    return [len(json.dumps(run.parameters, default=str)) for run in runs]


@pytest.mark.slow
def test_a_corpus_over_one_megabyte_builds_under_prefect(tmp_path, hashing_settings, prefect_harness):
    corpus = tmp_path / "documents.jsonl"
    size = write_repeated_corpus(corpus, 1_050_000)
    (tmp_path / "bad.jsonl").write_text('{"doc_id": "broken", "text": 3}\nnot json\n')
    workspace = Workspace.at(tmp_path / "ws")
    # The cheap front of the stage graph keeps the test fast; every document still goes
    # through Prefect task runs that read it from the input file by reference.
    stages = select_stages(until="split_sentences")
    report = build_with_prefect(
        [str(corpus), str(tmp_path / "bad.jsonl")], workspace, hashing_settings, stages=stages, quiet=True
    )
    assert size > 1_000_000 and report.used_prefect
    documents = read_frame(workspace, "documents", columns=["doc_id", "n_chars"])
    assert len(documents) == len(report.documents) > 15
    assert report.count("built") == len(documents) * len(stages) and report.count("failed") == 0
    assert int(documents["n_chars"].sum()) > 1_000_000
    # Bad input at scale: one failures row per bad record, the rest built.
    assert len(report.ingest_failures) == 2 and not report.ok
    sent = flow_run_parameter_bytes("build_documents")
    assert sent and max(sent) < 20_000 < size  # references only: a few KB whatever the corpus size
    again = build_with_prefect([str(corpus)], workspace, hashing_settings, stages=stages, quiet=True)
    assert not again.used_prefect and again.count("skipped") == len(documents) * len(stages)


@pytest.mark.slow
def test_more_than_1500_questions_evaluate_under_prefect(
    tmp_path, sample_workspace, hashing_settings, prefect_harness
):
    records = [
        json.loads(line)
        for path in sorted(SAMPLES.glob("*.questions.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    questions = tmp_path / "questions.jsonl"
    with questions.open("w", encoding="utf-8") as out:
        for copy in range(1_600 // len(records) + 1):
            for record in records:
                out.write(json.dumps({**record, "qid": f"{record['qid']}-r{copy}"}) + "\n")
    report = evaluate_with_prefect(sample_workspace, questions, hashing_settings, system="hybrid")
    assert len(report.rows) > 1_500 and (report.rows["status"] == "answered").all()
    assert report.metrics["evidence_recall"] is not None
    sent = flow_run_parameter_bytes("answer_documents")
    assert sent and max(sent) < 20_000 < questions.stat().st_size


@pytest.mark.slow
def test_dask_runner_builds_on_a_two_process_local_cluster(tmp_path, hashing_settings, prefect_harness):
    settings = hashing_settings.model_copy(
        update={"build": hashing_settings.build.model_copy(update={"concurrency": 2})}
    )
    workspace = Workspace.at(tmp_path / "ws")
    stages = select_stages(until="embed_texts")
    report = build_with_prefect(
        [str(SCREENPLAY), str(STORY)], workspace, settings, stages=stages, quiet=True, runner="dask"
    )
    assert report.used_prefect and report.ok, report.summary()
    assert report.count("built") == 2 * len(stages)
    assert set(read_frame(workspace, "embeddings")["doc_id"]) == {
        "the_lighthouse_key",
        "the_fisherman_and_his_wife",
    }
