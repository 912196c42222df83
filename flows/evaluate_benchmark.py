"""Prefect wiring for evaluation: the `evaluate_benchmark` deployment flow, and one task run
per document's questions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE

from flows.answer_questions import QueryEngine
from flows.evaluation import EvalReport, answer_document, evaluate
from flows.prefect_server import reap_with_this_process
from schemas.config import Settings, load_settings
from tasks.evaluate.metrics import Question
from tasks.tables.io import Workspace


@task(name="answer_document", cache_policy=NO_CACHE, persist_result=False)
def answer_document_task(engine: QueryEngine, run_id: str, benchmark: str, doc_id: str, questions: list[Question],
                         system: str, samples: int) -> dict[str, list[dict]]:
    return answer_document(engine, run_id, benchmark, doc_id, questions, system, samples)


@flow(name="answer_documents", persist_result=False, validate_parameters=False)
def answer_documents_flow(engine: QueryEngine, run_id: str, benchmark: str, jobs: list[tuple[str, list[Question]]],
                          system: str, samples: int) -> list[dict[str, list[dict]]]:
    # Documents are answered one after another so latency figures are not inflated by sharing 2 cores.
    return [answer_document_task.with_options(task_run_name=f"answer[{doc_id}]")(
        engine, run_id, benchmark, doc_id, questions, system, samples) for doc_id, questions in jobs]


def map_documents_with_prefect(engine, run_id, benchmark, jobs, system, samples):
    reap_with_this_process()  # a killed evaluation leaves no Prefect server behind
    return answer_documents_flow(engine, run_id, benchmark, jobs, system, samples)


def evaluate_with_prefect(workspace: Workspace, questions_path: Path, settings: Settings, **options: Any) -> EvalReport:
    """`evaluate` with documents mapped as Prefect task runs (batch and scheduled runs)."""
    return evaluate(workspace, questions_path, settings, map_documents=map_documents_with_prefect, **options)


@flow(name="evaluate_benchmark", persist_result=False)
def evaluate_benchmark(questions: str, workspace: str, system: str = "nkw", config: str | None = None,
                       limit: int | None = None, samples: int = 1) -> dict[str, Any]:
    """Deployment entry point: score `system` on a questions file over a built workspace."""
    settings = load_settings(Path(config) if config else None)
    report = evaluate(Workspace.at(workspace), Path(questions), settings, system=system, limit=limit, samples=samples,
                      map_documents=map_documents_with_prefect)
    return report.to_json()
