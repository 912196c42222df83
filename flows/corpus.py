"""Build a workspace from input paths: scan the inputs, plan against the manifest, then run
the stage graph where something changed. When nothing changed, no Prefect server starts and
no model loads: the plan alone proves every stage is up to date.

Inputs are streamed: the plan keeps one `DocumentRef` per document (never its text), and
each document's text is read again from its input by the task that ingests it. One writer
at a time: the build holds the workspace's writer lock (tasks.tables.lock)."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tasks.tables.lock import WriterLock
from tasks.tables.manifest import list_manifests
from flows.remove import remove_documents, workspace_doc_ids
from flows.runner import DocumentReport, Resources, StageOutcome, pending_stages, run_document
from flows.sessions import make_resources
from flows.stages import Stage, select_stages
from schemas.config import Settings
from tasks.ingest.ingest_documents import IngestFailure
from tasks.ingest.scan import DocumentRef, scan_inputs
from tasks.tables.io import Workspace, write_table


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
    def ok(self) -> bool:
        return not self.ingest_failures and not any(d.failed for d in self.documents)

    def summary(self) -> dict[str, Any]:
        return {"documents": len(self.documents), "built": self.count("built"), "skipped": self.count("skipped"),
                "failed": self.count("failed"), "blocked": self.count("blocked"),
                "ingest_failures": len(self.ingest_failures), "removed": len(self.removed),
                "seconds": round(self.seconds, 2)}


class Progress:
    """One line per stage outcome on stderr, safe across threads."""

    def __init__(self, total_documents: int, stream=None, quiet: bool = False) -> None:
        self.total = total_documents
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.finished = 0
        self._lock = threading.Lock()

    def __call__(self, doc_id: str, outcome: StageOutcome) -> None:
        if self.quiet or outcome.status == "skipped":
            return
        with self._lock:
            rows = ", ".join(f"{table} {n}" for table, n in outcome.rows.items() if table not in ("failures", "llm_calls"))
            detail = outcome.error if outcome.error else rows
            print(f"  {doc_id[:36]:<36} {outcome.stage:<24} {outcome.status:<7} {outcome.seconds:6.1f}s  {detail}",
                  file=self.stream, flush=True)
            for warning in outcome.warnings:
                print(f"  {doc_id[:36]:<36} warning: {warning}", file=self.stream, flush=True)

    def document_done(self, report: DocumentReport) -> None:
        if self.quiet:
            return
        with self._lock:
            self.finished += 1
            status = "FAILED (see failures)" if report.failed else "done"
            print(f"[{self.finished}/{self.total}] {report.doc_id} {status}", file=self.stream, flush=True)


@dataclass
class Plan:
    """What a build will do: references to the documents with pending stages, and the rest."""

    to_build: list[DocumentRef] = field(default_factory=list)
    up_to_date: list[DocumentRef] = field(default_factory=list)
    failures: list[IngestFailure] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    order: dict[str, int] = field(default_factory=dict)

    @property
    def doc_ids(self) -> set[str]:
        return set(self.order) | {f.doc_id for f in self.failures}


def plan_build(paths: list[str], workspace: Workspace, settings: Settings, stages: list[Stage],
               resources: Resources) -> Plan:
    """Stream the inputs once; keep a reference per document, decide from the manifest what to run."""
    known = {m.doc_id: m.source for m in list_manifests(workspace) if m.source}
    plan = Plan()
    for item in scan_inputs(paths, max_chars=settings.build.max_document_chars, known_sources=known):
        if item.notice:
            plan.notices.append(item.notice)
        elif item.failure is not None:
            plan.failures.append(item.failure)
        elif item.document is not None:
            ref = DocumentRef.of(item.document, item.offset)
            plan.order[ref.doc_id] = len(plan.order)
            pending = pending_stages(workspace, ref, stages, settings, resources)
            (plan.to_build if pending else plan.up_to_date).append(ref)
    return plan


def record_ingest_failures(workspace: Workspace, failures: list[IngestFailure]) -> list[dict[str, str]]:
    """Write one failures partition per input that could not become a document."""
    by_doc: dict[str, dict[str, dict[str, str]]] = {}
    for failure in failures:
        row = {"doc_id": failure.doc_id, "stage": "ingest_documents", "item_id": failure.source,
               "error": failure.error, "payload": ""}
        by_doc.setdefault(failure.doc_id, {})[failure.source] = row
    for doc_id, rows in by_doc.items():
        write_table(workspace, "failures", list(rows.values()), doc_id, "ingest_documents")
    return [row for rows in by_doc.values() for row in rows.values()]


def build(paths: list[str], workspace: Workspace, settings: Settings, *, stages: list[Stage] | None = None,
          resources: Resources | None = None, use_prefect: bool = True, quiet: bool = False, prune: bool = False,
          runner: str = "thread", dask_address: str | None = None) -> BuildReport:
    """Bring every stage of every input document up to date (under the workspace's writer lock)."""
    with WriterLock(workspace, "build"):
        return _build(paths, workspace, settings, stages or select_stages(), resources or make_resources(settings),
                      use_prefect, quiet, prune, runner, dask_address)


def _build(paths, workspace, settings, stages, resources, use_prefect, quiet, prune, runner, dask_address):
    started = time.perf_counter()
    workspace.tables_dir.mkdir(parents=True, exist_ok=True)
    plan = plan_build(paths, workspace, settings, stages, resources)
    report = BuildReport(notices=list(plan.notices))
    report.ingest_failures = record_ingest_failures(workspace, plan.failures)
    if prune:
        report.removed = remove_documents(workspace, sorted(workspace_doc_ids(workspace) - plan.doc_ids))
    report.plan_seconds = time.perf_counter() - started
    progress = Progress(len(plan.to_build), quiet=quiet)
    for ref in plan.up_to_date:
        report.documents.append(run_document(workspace, ref, stages, settings, resources))
    if plan.to_build and use_prefect:
        from flows.build_corpus import build_documents  # Prefect only when there is work

        report.used_prefect = True
        report.documents.extend(build_documents(workspace, plan.to_build, stages, resources, progress,
                                                runner=runner, dask_address=dask_address))
    else:
        for ref in plan.to_build:
            report.documents.append(run_document(workspace, ref, stages, settings, resources, progress))
            progress.document_done(report.documents[-1])
    report.documents.sort(key=lambda d: plan.order.get(d.doc_id, 0))
    report.seconds = time.perf_counter() - started
    return report
