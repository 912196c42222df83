"""Prefect wiring for evaluation: the `evaluate_benchmark` deployment flow, and one task run
per document's questions.

Parameters are references: the workspace and questions-file paths (with the file's hash),
doc ids, the run's options, the settings and a session key. Each task reads its document's
questions from the file; the query engine (loaded documents, embedder, LLM client) is the
caller's when the task runs in its process, else one built per process from the settings.
Documents are mapped concurrently on a thread-pool task runner
(`[evaluate].document_concurrency` documents at a time).
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from flows.answer_questions import QueryEngine
from flows.build.sessions import api_key, settings_payload
from flows.evaluation.evaluate import EvalJob, EvalReport, answer_document, document_questions, evaluate
from flows.evaluation.judging import judge_client
from flows.prefect_server import reap_with_this_process, without_heartbeats
from schemas.config import Settings, load_settings
from schemas.ids import stable_hash
from tasks.llm.client.openai_client import build_llm_client
from tasks.tables.io import Workspace

_ENGINES: dict[str, QueryEngine] = {}
_REGISTERED: dict[str, QueryEngine] = {}
_LOCK = threading.Lock()


def engine_for(session: str, workspace: str, settings: dict[str, Any]) -> QueryEngine:
    with _LOCK:
        if session in _REGISTERED:
            return _REGISTERED[session]
        key = stable_hash("engine", workspace, settings)
        if key not in _ENGINES:
            parsed = Settings.model_validate(settings)
            target = Workspace.at(workspace)
            llm = build_llm_client(parsed.llm, api_key(), target.cache_dir / "llm")
            _ENGINES[key] = QueryEngine(target, parsed, llm=llm)
        return _ENGINES[key]


@task(name="answer_document", cache_policy=NO_CACHE, persist_result=False)
def answer_document_task(
    job: dict[str, Any], doc_id: str, settings: dict[str, Any], session: str
) -> dict[str, list[dict]]:
    run = EvalJob(**job)
    questions = document_questions(Path(run.questions), run.questions_sha256, doc_id, run.limit)
    engine = engine_for(session, run.workspace, settings)
    return answer_document(engine, run.run_id, run.benchmark, doc_id, questions, run.system, run.samples)


@flow(name="answer_documents", persist_result=False, validate_parameters=False)
def answer_documents_flow(
    job: dict[str, Any], doc_ids: list[str], settings: dict[str, Any], session: str
) -> list[dict[str, list[dict]]]:
    futures = [
        answer_document_task.with_options(task_run_name=f"answer[{doc_id}]").submit(
            job, doc_id, settings, session
        )
        for doc_id in doc_ids
    ]
    return [future.result() for future in futures]


def map_documents_with_prefect(
    job: EvalJob, doc_ids: list[str], engine: QueryEngine, settings: Settings
) -> list[dict[str, list[dict]]]:
    reap_with_this_process()  # a killed evaluation leaves no Prefect server behind
    session = uuid.uuid4().hex  # tasks in this process answer with `engine` (its documents stay loaded)
    with _LOCK:
        _REGISTERED[session] = engine
    workers = settings.evaluate.document_concurrency
    runner = answer_documents_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))
    try:
        with without_heartbeats():
            return runner(dataclasses.asdict(job), doc_ids, settings_payload(settings), session)
    finally:
        with _LOCK:
            _REGISTERED.pop(session, None)


def evaluate_with_prefect(
    workspace: Workspace, questions_path: Path, settings: Settings, **options: Any
) -> EvalReport:
    """`evaluate` with documents mapped as Prefect task runs (batch and scheduled runs)."""
    return evaluate(workspace, questions_path, settings, map_documents=map_documents_with_prefect, **options)


@flow(name="evaluate_benchmark", persist_result=False)
def evaluate_benchmark(
    questions: str,
    workspace: str,
    system: str = "nkw",
    config: str | None = None,
    limit: int | None = None,
    samples: int = 1,
    llm_url: str | None = None,
    model: str | None = None,
    fresh: bool = False,
) -> dict[str, Any]:
    """Deployment entry point: score `system` on a questions file over a built workspace, with the
    LLM at `llm_url` (or the config file's [llm] section) when one is configured; the judge is
    `[evaluate].judge_url` / `judge_model`, else the answering LLM, else none."""
    settings = load_settings(Path(config) if config else None, {"llm": {"url": llm_url, "model": model}})
    target = Workspace.at(workspace)
    llm = build_llm_client(settings.llm, api_key(), target.cache_dir / "llm")
    judge = judge_client(settings, api_key(), target) or llm
    try:
        report = evaluate(
            target,
            Path(questions),
            settings,
            system=system,
            limit=limit,
            samples=samples,
            engine=QueryEngine(target, settings, llm=llm),
            map_documents=map_documents_with_prefect,
            judge=judge,
            fresh=fresh,
        )
    finally:
        for client in {id(c): c for c in (llm, judge) if c is not None}.values():
            client.close()
    return report.to_json()
