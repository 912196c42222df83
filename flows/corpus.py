"""Build a workspace from input paths: ingest, plan against the manifest, then run the
stage graph where something changed. When nothing changed, no Prefect server starts and
no model loads: the plan alone proves every stage is up to date."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from tasks.tables.manifest import list_manifests
from flows.runner import DocumentReport, Resources, StageOutcome, pending_stages, run_document
from flows.stages import Stage, select_stages
from schemas.config import Settings
from tasks.embeddings import build_embedder
from tasks.ingest.ingest_documents import IngestResult, ingest_paths
from tasks.tables.io import Workspace, write_table


@dataclass
class BuildReport:
    documents: list[DocumentReport] = field(default_factory=list)
    ingest_failures: list[dict[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    seconds: float = 0.0
    used_prefect: bool = False

    def count(self, status: str) -> int:
        return sum(1 for d in self.documents for o in d.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return not self.ingest_failures and not any(d.failed for d in self.documents)

    def summary(self) -> dict[str, Any]:
        return {"documents": len(self.documents), "built": self.count("built"), "skipped": self.count("skipped"),
                "failed": self.count("failed"), "blocked": self.count("blocked"),
                "ingest_failures": len(self.ingest_failures), "seconds": round(self.seconds, 2)}


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


def ingest(paths: list[str], workspace: Workspace, settings: Settings) -> IngestResult:
    known = {m.doc_id: m.source for m in list_manifests(workspace) if m.source}
    return ingest_paths(paths, max_chars=settings.build.max_document_chars, known_sources=known)


def record_ingest_failures(workspace: Workspace, result: IngestResult) -> list[dict[str, str]]:
    """Write one failures partition per input that could not become a document."""
    by_doc: dict[str, dict[str, dict[str, str]]] = {}
    for failure in result.failures:
        row = {"doc_id": failure.doc_id, "stage": "ingest_documents", "item_id": failure.source,
               "error": failure.error, "payload": ""}
        by_doc.setdefault(failure.doc_id, {})[failure.source] = row
    for doc_id, rows in by_doc.items():
        write_table(workspace, "failures", list(rows.values()), doc_id, "ingest_documents")
    return [row for rows in by_doc.values() for row in rows.values()]


def make_resources(settings: Settings, llm: Any = None, embedder_factory: Callable | None = None) -> Resources:
    return Resources(settings=settings, embedder_factory=embedder_factory or (lambda: build_embedder(settings.embed_texts)),
                     llm=llm)


def build(paths: list[str], workspace: Workspace, settings: Settings, *, stages: list[Stage] | None = None,
          resources: Resources | None = None, use_prefect: bool = True, quiet: bool = False) -> BuildReport:
    """Ingest `paths` and bring every stage of every document up to date."""
    started = time.perf_counter()
    stages = stages or select_stages()
    resources = resources or make_resources(settings)
    if resources.vectors_dir is None:
        resources.vectors_dir = workspace.cache_dir / "vectors"
    workspace.tables_dir.mkdir(parents=True, exist_ok=True)
    result = ingest(paths, workspace, settings)
    report = BuildReport(notices=list(result.notices))
    report.ingest_failures = record_ingest_failures(workspace, result)
    pending = {doc.doc_id: pending_stages(workspace, doc, stages, settings, resources) for doc in result.documents}
    to_build = [doc for doc in result.documents if pending[doc.doc_id]]
    progress = Progress(len(to_build), quiet=quiet)
    for doc in result.documents:
        if not pending[doc.doc_id]:
            report.documents.append(run_document(workspace, doc, stages, settings, resources))
    if to_build and use_prefect:
        from flows.build_corpus import build_documents  # Prefect only when there is work

        report.used_prefect = True
        report.documents.extend(build_documents(workspace, to_build, stages, resources, progress))
    else:
        for doc in to_build:
            report.documents.append(run_document(workspace, doc, stages, settings, resources, progress))
            progress.document_done(report.documents[-1])
    resources.flush_vectors()
    order = {doc.doc_id: i for i, doc in enumerate(result.documents)}
    report.documents.sort(key=lambda d: order.get(d.doc_id, 0))
    report.seconds = time.perf_counter() - started
    return report
