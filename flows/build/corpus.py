"""Build a workspace from input paths: scan the inputs, plan against the manifest, then run
the stage graph where something changed. When nothing changed, no Prefect server starts and
no model loads: the plan alone proves every stage is up to date.

Inputs are streamed: the plan keeps one `DocumentRef` per document (never its text), and
each document's text is read again from its input by the task that ingests it. One writer
at a time: the build holds the workspace's writer lock (tasks.tables.lock)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from flows.build.progress import Progress
from flows.build.remove import remove_documents, workspace_doc_ids
from flows.build.runner import DocumentReport, Resources, pending_stages, run_document
from flows.build.sessions import make_resources
from flows.stages import Stage, select_stages
from schemas.config import Settings
from tasks.ingest.ingest_documents import IngestFailure
from tasks.ingest.scan import DocumentRef, scan_inputs
from tasks.llm.client.preflight import LLMUnavailable, server_problem
from tasks.long_lived import freeze_long_lived
from tasks.tables.io import Workspace, write_table
from tasks.tables.lock import WriterLock
from tasks.tables.manifest import StageRecord, list_manifests, load_manifest, now_iso, save_manifest
from tasks.tables.partitions import write_listing


@dataclass
class BuildReport:
    documents: list[DocumentReport] = field(default_factory=list)
    ingest_failures: list[dict[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    seconds: float = 0.0
    used_prefect: bool = False
    removed: list[str] = field(default_factory=list)  # documents pruned (not in this input set)
    plan_seconds: float = 0.0  # scanning the inputs and checking the manifest

    def count(self, status: str) -> int:
        return sum(1 for d in self.documents for o in d.outcomes if o.status == status)

    @property
    def lost_items(self) -> int:
        return sum(o.lost_items for d in self.documents for o in d.outcomes)

    @property
    def ok(self) -> bool:
        """A build that lost work (a failed input, a failed stage, items the LLM never answered) is not ok."""
        lost = any(d.failed for d in self.documents) or self.count("partial")
        return not self.ingest_failures and not lost

    def summary(self) -> dict[str, Any]:
        return {
            "documents": len(self.documents),
            "built": self.count("built"),
            "skipped": self.count("skipped"),
            "partial": self.count("partial"),
            "lost_items": self.lost_items,
            "failed": self.count("failed"),
            "blocked": self.count("blocked"),
            "ingest_failures": len(self.ingest_failures),
            "removed": len(self.removed),
            "seconds": round(self.seconds, 2),
        }


@dataclass
class Plan:
    """What a build will do: references to the documents with pending stages, and the rest."""

    to_build: list[DocumentRef] = field(default_factory=list)
    up_to_date: list[DocumentRef] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    order: dict[str, int] = field(default_factory=dict)
    pending: dict[str, list[str]] = field(default_factory=dict)  # doc id -> stages that will run

    @property
    def doc_ids(self) -> set[str]:
        return set(self.order) | {f.doc_id for f in self.failures}


def plan_build(
    paths: list[str],
    workspace: Workspace,
    settings: Settings,
    stages: list[Stage],
    resources: Resources,
    doc_ids: set[str] | None = None,
) -> Plan:
    """Stream the inputs once; keep a reference per document, decide from the manifest what to run."""
    manifests = list_manifests(workspace)
    known = {m.doc_id: m.source for m in manifests if m.source}
    content = {m.doc_id: m.input_sha256 for m in manifests if m.input_sha256}
    plan = Plan()
    for item in scan_inputs(
        paths, max_chars=settings.build.max_document_chars, known_sources=known, known_content=content
    ):
        if item.notice:
            plan.notices.append(item.notice)
        elif item.failure is not None:
            plan.failures.append(item.failure)
        elif item.document is not None and (doc_ids is None or item.document.doc_id in doc_ids):
            ref = DocumentRef.of(item.document, item.offset)
            plan.order[ref.doc_id] = len(plan.order)
            pending = pending_stages(workspace, ref, stages, settings, resources)
            if pending:
                plan.to_build.append(ref)
                plan.pending[ref.doc_id] = pending
            else:
                plan.up_to_date.append(ref)
    return plan


# Builds documents elsewhere (e.g. as Prefect task runs): (workspace, refs, stages, resources, progress).
DocumentMapper = Callable[
    [Workspace, list[DocumentRef], list[Stage], Resources, "Progress"], list[DocumentReport]
]


def record_ingest_failures(workspace: Workspace, failures: list[IngestFailure]) -> list[dict[str, str]]:
    """Write one failures partition per input that could not become a document."""
    by_doc: dict[str, dict[str, dict[str, str]]] = {}
    for failure in failures:
        row = {
            "doc_id": failure.doc_id,
            "stage": "ingest_documents",
            "item_id": failure.source,
            "error": failure.error,
            "payload": "",
        }
        by_doc.setdefault(failure.doc_id, {})[failure.source] = row
    for doc_id, rows in by_doc.items():
        write_table(workspace, "failures", list(rows.values()), doc_id, "ingest_documents")
        manifest = load_manifest(workspace, doc_id)
        lost = [row for row in rows.values() if manifest.source and row["item_id"] == manifest.source]
        if lost:  # the input of a built document became unreadable: its old tables are no longer served
            manifest.stages["ingest_documents"] = StageRecord(
                fingerprint="",
                version="",
                config_hash="",
                outputs={},
                seconds=0.0,
                finished_at=now_iso(),
                status="failed",
                error=f"input no longer a document: {lost[0]['error']}",
            )
            save_manifest(workspace, manifest)
    return [row for rows in by_doc.values() for row in rows.values()]


# How to ask for the offline fallback, in the words of where the build was started.
CLI_FALLBACK_ADVICE = "pass --allow-offline-fallback"
DEPLOYMENT_FALLBACK_ADVICE = "run the deployment with the parameter allow_offline_fallback=true"


def preflight(
    resources: Resources,
    stages: list[Stage],
    pending: dict[str, list[str]],
    allow_offline_fallback: bool,
    notices: list[str],
    fallback_advice: str = CLI_FALLBACK_ADVICE,
) -> Resources:
    """Check the LLM server once before any LLM stage runs: LLMUnavailable (or the heuristics) if down."""
    llm_stages = {s.name for s in stages if s.uses_llm}
    if resources.llm is None or not any(llm_stages & set(names) for names in pending.values()):
        return resources
    problem = server_problem(resources.llm)
    if problem is None:
        return resources
    if not allow_offline_fallback:
        raise LLMUnavailable(
            f"{problem}; the build did not start. Start the server (check it with "
            f"`nkw llm check`), or {fallback_advice} to build with the offline heuristics"
        )
    notices.append(
        f"{problem}: LLM stages use the OFFLINE HEURISTICS instead (--allow-offline-fallback); "
        "the manifest records them as heuristic, and they rebuild with the LLM once the server "
        "answers"
    )
    return replace(resources, llm=None)


def build(
    paths: list[str],
    workspace: Workspace,
    settings: Settings,
    *,
    stages: list[Stage] | None = None,
    resources: Resources | None = None,
    map_documents: DocumentMapper | None = None,
    quiet: bool = False,
    prune: bool = False,
    allow_offline_fallback: bool = False,
    doc_ids: set[str] | None = None,
    fallback_advice: str = CLI_FALLBACK_ADVICE,
) -> BuildReport:
    """Bring every stage of every input document up to date (only `doc_ids`, when given), under the
    workspace's writer lock: in this process one document after another, or through `map_documents`
    (flows.build_corpus).

    Raises WorkspaceLocked when another writer holds the workspace, and LLMUnavailable when LLM
    stages have work and the configured server does not answer (unless `allow_offline_fallback`)."""
    with WriterLock(workspace, "build"):
        report = _build(
            paths,
            workspace,
            settings,
            stages or select_stages(),
            resources or make_resources(settings),
            map_documents,
            quiet,
            prune,
            allow_offline_fallback,
            doc_ids,
            fallback_advice,
        )
        write_listing(workspace)  # the files a reader outside NKW should count: tasks.tables.partitions
        return report


def _build(
    paths: list[str],
    workspace: Workspace,
    settings: Settings,
    stages: list[Stage],
    resources: Resources,
    map_documents: DocumentMapper | None,
    quiet: bool,
    prune: bool,
    allow_offline_fallback: bool,
    doc_ids: set[str] | None,
    fallback_advice: str,
) -> BuildReport:
    started = time.perf_counter()
    if resources.vectors_dir is None:
        resources.vectors_dir = workspace.cache_dir / "vectors"
    workspace.tables_dir.mkdir(parents=True, exist_ok=True)
    plan = plan_build(paths, workspace, settings, stages, resources, doc_ids)
    report = BuildReport(notices=list(plan.notices))
    report.ingest_failures = record_ingest_failures(workspace, plan.failures)
    if prune:
        report.removed = remove_documents(workspace, sorted(workspace_doc_ids(workspace) - plan.doc_ids))
    checked = preflight(
        resources, stages, plan.pending, allow_offline_fallback, report.notices, fallback_advice
    )
    if checked is not resources:  # offline fallback: the heuristics' fingerprints decide what is pending
        resources = checked
        plan = plan_build(paths, workspace, settings, stages, resources, doc_ids)
    report.plan_seconds = time.perf_counter() - started
    progress = Progress(len(plan.to_build), quiet=quiet or not plan.to_build, stages=len(stages))
    freeze_long_lived()  # what is alive now lives through the build: see tasks.long_lived
    for ref in plan.up_to_date:
        report.documents.append(run_document(workspace, ref, stages, settings, resources))
    try:
        if plan.to_build and map_documents is not None:
            report.used_prefect = True
            report.documents.extend(map_documents(workspace, plan.to_build, stages, resources, progress))
        else:
            for ref in plan.to_build:
                report.documents.append(run_document(workspace, ref, stages, settings, resources, progress))
                progress.document_done(report.documents[-1])
    finally:
        progress.close()
    resources.flush_vectors()
    report.documents.sort(key=lambda d: plan.order.get(d.doc_id, 0))
    report.seconds = time.perf_counter() - started
    return report
