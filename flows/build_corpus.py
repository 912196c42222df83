"""The `build_corpus` Prefect flow: map every document through the stage graph.

Flow and task parameters are references, never text: the workspace path, the path of a plan
file (one `DocumentRef` per line) with its hash, stage names, the settings and a session key
(flows.build.sessions). Each `build_document` task reads its own document from its input file, so
memory is bounded by the largest document times the concurrency, not by the corpus.

Documents run concurrently (`build.concurrency`) on Prefect's thread-pool task runner, or on
a Dask cluster through prefect-dask (`runner="dask"`); each stage that actually runs is a
Prefect task run of its own. What to skip is decided by the project's manifest
(flows.build.corpus), never by Prefect's cache.
"""

from __future__ import annotations

import json
import os
import threading
import time
from functools import partial
from pathlib import Path
from typing import Any

from prefect import flow, task
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.task_runners import ProcessPoolTaskRunner, ThreadPoolTaskRunner
from prefect.utilities.annotations import quote

from flows.build.corpus import DEPLOYMENT_FALLBACK_ADVICE, BuildReport, build
from flows.build.progress import Progress
from flows.build.runner import DocumentReport, Resources, StageOutcome, run_document, run_stage
from flows.build.sessions import (
    Session,
    api_key,
    close_session,
    make_resources,
    open_session,
    registered_session,
    session_for,
    worker_settings,
)
from flows.prefect_artifacts import build_subject, publish_build, record_flow_run
from flows.prefect_server import reporting_to_server
from flows.runtime import THREAD_VARIABLES
from flows.stages import Stage, select_stages
from schemas.config import Settings, load_settings
from schemas.ids import sha256_bytes
from tasks.ingest.scan import DocumentRef
from tasks.llm.client.factory import build_llm_client
from tasks.llm.client.pool import SharedPool, adopt_pools, sharing_all
from tasks.long_lived import freeze_long_lived
from tasks.tables.io import Workspace, atomic_write_text

PLANS_DIR = "plans"

# Named per stage and document ("canonicalize_entities[doc]") from the run's own parameters: a task
# copied with its own name for every stage cost 1.6 ms of the worker's CPU.
run_stage_task = task(
    name="run_stage", task_run_name="{stage.name}[{raw.doc_id}]", cache_policy=NO_CACHE, persist_result=False
)(run_stage)


def _stage_as_task(workspace, ref, stage, settings, resources, manifest, fingerprint) -> StageOutcome:
    # A nested task run in the document task's process: it gets the reference, never the text.
    # The manifest and the shared clients are quoted: Prefect does not walk them looking for
    # upstream runs (the manifest changes while the document's other stages commit).
    return run_stage_task(workspace, ref, stage, settings, quote(resources), quote(manifest), fingerprint)


@task(name="build_document", cache_policy=NO_CACHE, persist_result=False)
def build_document(
    workspace: str,
    ref: dict[str, Any],
    stages: list[str],
    settings: dict[str, Any],
    session: str,
    quiet: bool = True,
    force: list[str] = (),
) -> DocumentReport:
    """Build one document, read from its input by reference, in whatever process runs the task."""
    state = session_for(session, settings, stages, workspace, quiet, force)
    document = DocumentRef.from_json(ref)
    return run_document(
        Workspace.at(workspace),
        document,
        state.stages,
        state.resources.settings,
        state.resources,
        state.progress,
        _stage_as_task,
    )


def write_plan(workspace: Workspace, refs: list[DocumentRef], session: str) -> tuple[Path, str]:
    """The documents to build, one reference per line, in the workspace; returns (path, sha256)."""
    text = "".join(json.dumps(ref.to_json(), ensure_ascii=False, sort_keys=True) + "\n" for ref in refs)
    path = workspace.root / PLANS_DIR / f"{session}.jsonl"
    atomic_write_text(path, text)
    return path, sha256_bytes(text.encode("utf-8"))


def read_plan(path: str, sha256: str) -> list[dict[str, Any]]:
    data = Path(path).read_bytes()
    if sha256_bytes(data) != sha256:
        raise RuntimeError(f"build plan {path} was changed after it was written")
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


@flow(name="build_documents", persist_result=False, validate_parameters=False)
def build_documents_flow(
    workspace: str,
    plan: str,
    plan_sha256: str,
    stages: list[str],
    settings: dict[str, Any],
    session: str,
    quiet: bool = True,
    force: list[str] = (),
) -> list[DocumentReport]:
    futures = [
        build_document.with_options(task_run_name=f"build_document[{ref['doc_id']}]").submit(
            workspace, ref, stages, settings, session, quiet, force
        )
        for ref in read_plan(plan, plan_sha256)
    ]
    record_flow_run(build_subject(workspace))  # the build's artifact is attached to this run
    # Document lines are printed here, in the process that started the run, as documents finish
    # (wherever they were built), so they are counted once.
    started = registered_session(session)
    for future in as_completed(futures):
        if started is not None and started.progress is not None:
            started.progress.document_done(future.result())
    return [future.result() for future in futures]


def start_worker(shared_pools: list[SharedPool], threads: int) -> None:
    """Runs once in each worker process as it starts, before any task: the process hands its LLM
    requests to the build's process (one bound and one queue for all workers), and takes its share
    of the machine's threads for the embedding model (set before the model library loads)."""
    for name in THREAD_VARIABLES:
        os.environ[name] = str(threads)
    adopt_pools(shared_pools)
    freeze_long_lived()  # the imports are done and live as long as the worker
    threading.Thread(target=_exit_with_parent, args=(os.getppid(),), daemon=True).start()


def _exit_with_parent(parent: int) -> None:
    # A worker never outlives the build that started it (even one killed with SIGKILL): the next
    # build takes over the stale writer lock and must not find this one still writing.
    while os.getppid() == parent:
        time.sleep(1.0)
    os._exit(1)


def task_runner_for(
    runner: str, concurrency: int, dask_address: str | None = None, shared_pools: list[SharedPool] = ()
):
    """Prefect's thread pool (default); `concurrency` worker processes on this machine (their CPU
    work runs in parallel; together they keep the LLM bound of `shared_pools`); or a Dask cluster:
    `dask_address`, else a LocalCluster of `concurrency` single-threaded worker processes."""
    if runner == "thread":
        return ThreadPoolTaskRunner(max_workers=concurrency)
    if runner == "process":
        threads = int(os.environ.get(THREAD_VARIABLES[0]) or os.cpu_count() or 1)
        return ProcessPoolTaskRunner(
            max_workers=concurrency,
            initializer=start_worker,
            initargs=(list(shared_pools), max(1, threads // max(1, concurrency))),
        )
    if runner != "dask":
        raise ValueError(f"unknown runner {runner!r}; choose thread, process or dask")
    from prefect_dask import DaskTaskRunner  # optional scale-out dependency, loaded only when asked for

    if dask_address:
        return DaskTaskRunner(address=dask_address)
    return DaskTaskRunner(
        cluster_kwargs={
            "n_workers": concurrency,
            "threads_per_worker": 1,
            "processes": True,
            "dashboard_address": None,
        }
    )


def _load_model_meanwhile(resources: Resources, stages: list[Stage], runner: str) -> None:
    """With the thread runner the stages embed with this process's model: it is loaded while
    Prefect's server starts, a wait of several seconds in which this process is idle, instead of
    inside the first embed_texts, where the stages running beside it stretched the load from about
    1.5 s to 6 s (three STAGE dev screenplays). Worker processes load their own."""
    if runner != "thread" or not any(stage.needs_embedder for stage in stages):
        return

    def load() -> None:
        try:
            resources.prepare_embedder()
        except Exception:  # noqa: BLE001 - the first stage that embeds loads again and reports it
            pass

    threading.Thread(target=load, name="load-embedder", daemon=True).start()


def build_documents(
    workspace: Workspace,
    refs: list[DocumentRef],
    stages: list[Stage],
    resources: Resources,
    progress: Progress,
    runner: str = "thread",
    dask_address: str | None = None,
) -> list[DocumentReport]:
    """Run the document flow over `refs` with `build.concurrency` documents in flight, reporting to
    the Prefect server flows.prefect_server picks (a temporary one starts while the model loads)."""
    _load_model_meanwhile(resources, stages, runner)
    settings = resources.settings
    session = open_session(Session(resources=resources, stages=stages, progress=progress))
    # Longest first: the longest document's chain of stages decides when the build ends, so it
    # takes the first worker ready, and shorter ones fill the gaps (reports keep the input order).
    plan, digest = write_plan(workspace, sorted(refs, key=lambda ref: -ref.n_chars), session)
    # Worker processes send their LLM requests through this process, within its bound.
    llm = resources.llm
    pools = (getattr(llm, "pools", None) or [getattr(llm, "pool", None)]) if runner == "process" else []
    try:
        with sharing_all([pool for pool in pools if pool is not None]) as shared:
            flow_ = build_documents_flow.with_options(
                task_runner=task_runner_for(runner, settings.build.concurrency, dask_address, shared)
            )
            with reporting_to_server(progress.meter, workers=runner == "process"):
                return flow_(
                    str(workspace.root),
                    str(plan),
                    digest,
                    [s.name for s in stages],
                    worker_settings(resources),
                    session,
                    progress.quiet,
                    sorted(resources.force),
                )
    finally:
        close_session(session)
        plan.unlink(missing_ok=True)


@flow(name="build_corpus", persist_result=False)
def build_corpus(
    paths: list[str],
    workspace: str,
    config: str | None = None,
    concurrency: int | None = None,
    stages: list[str] | None = None,
    llm_url: str | None = None,
    model: str | None = None,
    prune: bool = False,
    runner: str = "thread",
    dask_address: str | None = None,
    allow_offline_fallback: bool = False,
) -> dict[str, Any]:
    """Deployment entry point: build `paths` into `workspace` (scheduled corpus rebuilds), with the
    LLM at `llm_url` (or the config file's [llm] section) when one is configured. With
    `allow_offline_fallback`, a server that does not answer makes the LLM stages use the offline
    heuristics (recorded as such) instead of failing the run."""
    settings = load_settings(
        Path(config) if config else None,
        {"build": {"concurrency": concurrency}, "llm": {"url": llm_url, "model": model}},
    )
    target = Workspace.at(workspace)
    llm = build_llm_client(settings.llm, api_key(), target.cache_dir / "llm")
    try:
        report = build_with_prefect(
            paths,
            target,
            settings,
            stages=select_stages(stages),
            resources=make_resources(settings, llm=llm),
            prune=prune,
            runner=runner,
            dask_address=dask_address,
            quiet=True,
            allow_offline_fallback=allow_offline_fallback,
            fallback_advice=DEPLOYMENT_FALLBACK_ADVICE,
        )
    finally:
        if llm is not None:
            llm.close()
    summary = report.summary()
    if not report.ok:
        raise RuntimeError(
            f"build finished with failures: {summary}"
        )  # a run that lost work is not a success
    return summary


def build_with_prefect(
    paths: list[str],
    workspace: Workspace,
    settings: Settings,
    *,
    runner: str = "thread",
    dask_address: str | None = None,
    **options: Any,
) -> BuildReport:
    """`build` with the documents that need work mapped as Prefect task runs (threads or Dask), and
    its artifact published on the flow run: the deployment's own, else the document flow's (a build
    with nothing to do runs no flow, starts no server, and has none)."""
    mapper = partial(build_documents, runner=runner, dask_address=dask_address)
    report = build(paths, workspace, settings, map_documents=mapper, **options)
    problem = publish_build(report, workspace.root)
    if problem:
        report.notices.append(problem)
    return report
