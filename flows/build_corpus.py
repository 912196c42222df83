"""The `build_corpus` Prefect flow: map every document through the stage graph.

Documents are built concurrently (setting `build.concurrency`) on Prefect's thread-pool
task runner; each stage that actually runs is a Prefect task run of its own. What to skip
is decided by the project's manifest (flows.corpus), never by Prefect's cache.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from flows.corpus import BuildReport, Progress, build
from flows.prefect_server import reap_with_this_process
from flows.runner import DocumentReport, Resources, StageOutcome, run_document, run_stage
from flows.stages import Stage, select_stages
from schemas.config import Settings, load_settings
from tasks.stage import RawDocument
from tasks.tables.io import Workspace

run_stage_task = task(name="run_stage", cache_policy=NO_CACHE, persist_result=False)(run_stage)


def _stage_as_task(workspace, raw, stage, settings, resources, manifest, fingerprint) -> StageOutcome:
    return run_stage_task.with_options(task_run_name=f"{stage.name}[{raw.doc_id}]")(
        workspace, raw, stage, settings, resources, manifest, fingerprint)


@task(name="build_document", cache_policy=NO_CACHE, persist_result=False)
def build_document(workspace: Workspace, raw: RawDocument, stages: list[Stage], resources: Resources,
                   progress: Progress) -> DocumentReport:
    report = run_document(workspace, raw, stages, resources.settings, resources, progress, _stage_as_task)
    progress.document_done(report)
    return report


@flow(name="build_documents", persist_result=False, validate_parameters=False)
def build_documents_flow(workspace: Workspace, documents: list[RawDocument], stages: list[Stage],
                         resources: Resources, progress: Progress) -> list[DocumentReport]:
    futures = [build_document.with_options(task_run_name=f"build_document[{doc.doc_id}]").submit(
        workspace, doc, stages, resources, progress) for doc in documents]
    return [future.result() for future in futures]


def build_documents(workspace: Workspace, documents: list[RawDocument], stages: list[Stage], resources: Resources,
                    progress: Progress) -> list[DocumentReport]:
    """Run the document flow with as many documents in flight as `build.concurrency` allows."""
    reap_with_this_process()  # a killed build leaves no Prefect server behind
    runner = ThreadPoolTaskRunner(max_workers=resources.settings.build.concurrency)
    return build_documents_flow.with_options(task_runner=runner)(workspace, documents, stages, resources, progress)


@flow(name="build_corpus", persist_result=False)
def build_corpus(paths: list[str], workspace: str, config: str | None = None, concurrency: int | None = None,
                 stages: list[str] | None = None) -> dict[str, Any]:
    """Deployment entry point: build `paths` into `workspace` (scheduled corpus rebuilds)."""
    settings = load_settings(Path(config) if config else None, {"build": {"concurrency": concurrency}})
    report = build_with_prefect(paths, Workspace.at(workspace), settings, stages=select_stages(stages))
    return report.summary()


def build_with_prefect(paths: list[str], workspace: Workspace, settings: Settings, **options: Any) -> BuildReport:
    """`build` with the documents that need work mapped as Prefect task runs."""
    return build(paths, workspace, settings, map_documents=build_documents, **options)
