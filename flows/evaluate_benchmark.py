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
from functools import partial
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from flows.answer_questions import QueryEngine, warm_up
from flows.build.sessions import api_key, settings_payload
from flows.evaluation.evaluate import (
    EvalJob,
    EvalReport,
    answer_document,
    answering_identity,
    evaluate,
)
from flows.evaluation.judging import judge_client
from flows.evaluation.question_file import document_questions
from flows.evaluation.run_records import settings_summary
from flows.prefect_artifacts import eval_subject, publish_eval, record_flow_run
from flows.prefect_server import reporting_to_server
from flows.runtime import Meter
from schemas.config import Settings, load_settings
from schemas.ids import stable_hash
from tasks.llm.client.factory import build_llm_client
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
    record_flow_run(eval_subject(job["run_id"]))  # the evaluation's artifact is attached to this run
    futures = [
        answer_document_task.with_options(task_run_name=f"answer[{doc_id}]").submit(
            job, doc_id, settings, session
        )
        for doc_id in doc_ids
    ]
    return [future.result() for future in futures]


def map_documents_with_prefect(
    job: EvalJob, doc_ids: list[str], engine: QueryEngine, settings: Settings, progress: Meter | None = None
) -> list[dict[str, list[dict]]]:
    """Answer each document's questions as a task run, reporting to the server flows.prefect_server
    picks; `progress` (a flows.runtime.Meter) shows a temporary server's start-up."""
    session = uuid.uuid4().hex  # tasks in this process answer with `engine` (its documents stay loaded)
    with _LOCK:
        _REGISTERED[session] = engine
    workers = settings.evaluate.document_concurrency
    runner = answer_documents_flow.with_options(task_runner=ThreadPoolTaskRunner(max_workers=workers))
    loading = _load_meanwhile(engine, doc_ids[:1])
    try:
        with reporting_to_server(progress):
            loading.join()  # the first document's bundle and model, loaded while the server started
            return runner(dataclasses.asdict(job), doc_ids, settings_payload(settings), session)
    finally:
        with _LOCK:
            _REGISTERED.pop(session, None)


def _load_meanwhile(engine: QueryEngine, doc_ids: list[str]) -> threading.Thread:
    """Load the documents and the embedding model in a thread, while this process only waits for
    Prefect's server; the first task would load them otherwise, after the wait."""

    def load() -> None:
        for doc_id in doc_ids:
            try:
                warm_up(engine, doc_id)
            except Exception:  # noqa: BLE001 - the task loads again and reports it for its document
                pass

    thread = threading.Thread(target=load, name="load-engine", daemon=True)
    thread.start()
    return thread


def evaluate_with_prefect(
    workspace: Workspace, questions_path: Path, settings: Settings, **options: Any
) -> EvalReport:
    """`evaluate` with documents mapped as Prefect task runs (batch and scheduled runs), and its
    scores published as an artifact on the flow run: the deployment's own, else the answering
    flow's (a run whose every document came from its checkpoints ran no flow, and has none)."""
    mapper = partial(map_documents_with_prefect, progress=options.get("progress"))
    report = evaluate(workspace, questions_path, settings, map_documents=mapper, **options)
    model = settings.llm.model if settings.llm.url else None
    changed = settings_summary(answering_identity(settings), answering_identity(Settings()))
    problem = publish_eval(report, workspace.root, model, changed)
    if problem:
        report.warnings.append(problem)
    return report


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
        report = evaluate_with_prefect(
            target,
            Path(questions),
            settings,
            system=system,
            limit=limit,
            samples=samples,
            engine=QueryEngine(target, settings, llm=llm),
            judge=judge,
            fresh=fresh,
        )
    finally:
        for client in {id(c): c for c in (llm, judge) if c is not None}.values():
            client.close()
    return report.to_json()
