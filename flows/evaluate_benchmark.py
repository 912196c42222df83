"""Prefect wiring for evaluation: the `evaluate_benchmark` deployment flow, and one task run
per document's questions, mapped concurrently on a thread-pool task runner
(`[evaluate].document_concurrency` documents at a time)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from flows.answer_questions import QueryEngine
from flows.evaluation import answer_document, evaluate
from flows.judging import judge_client
from schemas.config import load_settings
from tasks.evaluate.metrics import Question
from tasks.llm.client import build_llm_client
from tasks.tables.io import Workspace


@task(name="answer_document", cache_policy=NO_CACHE, persist_result=False)
def answer_document_task(engine: QueryEngine, run_id: str, benchmark: str, doc_id: str, questions: list[Question],
                         system: str, samples: int) -> dict[str, list[dict]]:
    return answer_document(engine, run_id, benchmark, doc_id, questions, system, samples)


@flow(name="answer_documents", persist_result=False, validate_parameters=False)
def answer_documents_flow(engine: QueryEngine, run_id: str, benchmark: str, jobs: list[tuple[str, list[Question]]],
                          system: str, samples: int) -> list[dict[str, list[dict]]]:
    futures = [answer_document_task.with_options(task_run_name=f"answer[{doc_id}]").submit(
        engine, run_id, benchmark, doc_id, questions, system, samples) for doc_id, questions in jobs]
    return [future.result() for future in futures]


def map_documents_with_prefect(engine, run_id, benchmark, jobs, system, samples):
    workers = engine.settings.evaluate.document_concurrency
    runner = answer_documents_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))
    return runner(engine, run_id, benchmark, jobs, system, samples)


@flow(name="evaluate_benchmark", persist_result=False)
def evaluate_benchmark(questions: str, workspace: str, system: str = "nkw", config: str | None = None,
                       limit: int | None = None, samples: int = 1, fresh: bool = False) -> dict[str, Any]:
    """Deployment entry point: score `system` on a questions file over a built workspace (the judge
    is `[evaluate].judge_url` / `judge_model`, else the answering LLM, else none)."""
    settings = load_settings(Path(config) if config else None)
    ws = Workspace.at(workspace)
    llm = build_llm_client(settings.llm, None, ws.cache_dir / "llm")
    judge = judge_client(settings, None, ws) or llm
    try:
        report = evaluate(ws, Path(questions), settings, system=system, limit=limit, samples=samples,
                          engine=QueryEngine(ws, settings, llm=llm), map_documents=map_documents_with_prefect,
                          judge=judge, fresh=fresh)
    finally:
        for client in {id(c): c for c in (llm, judge) if c is not None}.values():
            client.close()
    return report.to_json()

