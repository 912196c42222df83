"""Run the stage graph for one document: skip what the manifest says is up to date, read
inputs, call the stage, check contracts, write outputs atomically, record the manifest.

Plain functions (no Prefect) so they are testable directly; `flows.build_corpus` wraps them
in Prefect tasks.
"""

from __future__ import annotations

import errno
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import pyarrow as pa

from flows.build.invalidate import invalidate_after_failure
from flows.build.outputs import check_all, forget_missing_replies, lost_items, validate_outputs
from flows.build.schedule import requests_first, run_graph, upstream
from flows.stages import SIDE_TABLES, Stage, blocked_by
from schemas.config import Settings
from schemas.ids import stable_hash
from tasks.embeddings import Embedder, embedder_identity
from tasks.ingest.scan import DocumentRef, read_document
from tasks.llm.requests.prompts import prompts_hash
from tasks.stage import RawDocument, StageContext
from tasks.tables.io import Workspace, read_frame, write_table
from tasks.tables.manifest import (
    DocumentManifest,
    StageRecord,
    is_up_to_date,
    load_manifest,
    now_iso,
    save_manifest,
    stage_fingerprint,
)
from tasks.vector_store import caching

DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


@dataclass
class StageOutcome:
    stage: str
    status: str  # built | partial | skipped | failed | blocked
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    lost_items: int = 0  # items the LLM server never answered (status partial)


@dataclass
class DocumentReport:
    doc_id: str
    title: str
    outcomes: list[StageOutcome] = field(default_factory=list)
    seconds: float = 0.0  # wall time of the whole document, orchestration included
    n_chars: int = 0

    @property
    def failed(self) -> bool:
        return any(o.status == "failed" for o in self.outcomes)


@dataclass
class Resources:
    """Clients shared by all documents of a build, created on first use."""

    settings: Settings
    embedder_factory: Callable[[], Embedder]
    llm: Any = None  # tasks.llm.client.LLMClient when an LLM URL is configured
    force: frozenset[str] = frozenset()  # stages rebuilt even when up to date (`nkw build --force STAGE`)
    vectors_dir: Any = None  # Path of the workspace vector store: each text is embedded once per model
    reuse_vectors: bool = True  # False: every stage embeds its own texts (the behaviour before the store)
    _embedder: Any = None  # Embedder; typed loosely so Prefect can describe task parameters
    _lock: Any = field(default_factory=threading.Lock)

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                embedder = self.embedder_factory()
                self._embedder = caching(embedder, self.vectors_dir) if self.reuse_vectors else embedder
            return self._embedder

    def prepare_embedder(self) -> None:
        """Load the embedding model now, if it has one to load."""
        prepare = getattr(self.embedder, "prepare", None)
        if prepare is not None:
            prepare()

    def flush_vectors(self) -> None:
        """Persist the vectors embedded so far (a no-op when no embedder was built)."""
        with self._lock:
            embedder = self._embedder
        if embedder is not None and hasattr(embedder, "flush"):
            embedder.flush()

    def backend_identity(self, stage: Stage) -> str:
        parts = []
        if stage.needs_embedder:
            parts.append(embedder_identity(self.settings.embed_texts))
        if stage.uses_llm:
            # What the model is asked with (not where it is served) decides whether LLM outputs can change.
            llm = self.settings.llm
            sampling = stable_hash(
                llm.temperature, llm.max_tokens, llm.max_tokens_retry, llm.enable_thinking, length=8
            )
            parts.append(f"llm:{self.llm.model}:{sampling}" if self.llm is not None else "heuristic")
        return "|".join(parts)


ProgressFn = Callable[[str, StageOutcome], None]
# What a build passes around: a reference (the text is read again by the ingest stage), or a
# document already in memory (tests, single-document callers).
Document = DocumentRef | RawDocument


def fingerprint_for(
    stage: Stage, raw: Document, manifest: DocumentManifest, settings: Settings, resources: Resources
) -> str:
    if stage.reads_input:
        inputs: dict[str, str | None] = {"raw": raw.fingerprint}
    else:
        inputs = {table: manifest.output_hash(table) for table in sorted(stage.reads)}
    return stage_fingerprint(
        stage=stage.name,
        version=stage.version,
        config_hash=stage_config_hash(stage, settings),
        prompt_hash=prompts_hash(stage.prompts),
        backend=resources.backend_identity(stage),
        inputs=inputs,
    )


def stage_config_hash(stage: Stage, settings: Settings) -> str:
    own = settings.section_hash(stage.config) if stage.config else ""
    if not stage.reads_settings:
        return own
    values = []
    for name in stage.reads_settings:
        section, field_name = name.split(".")
        values.append((name, getattr(getattr(settings, section), field_name)))
    return stable_hash(own, values)


def pending_stages(
    workspace: Workspace, raw: Document, stages: list[Stage], settings: Settings, resources: Resources
) -> list[str]:
    """Stages that would run for this document, judged from the manifest alone."""
    manifest = load_manifest(workspace, raw.doc_id)
    pending: list[str] = []
    for stage in stages:
        fingerprint = fingerprint_for(stage, raw, manifest, settings, resources)
        if (
            pending
            or stage.name in resources.force
            or not is_up_to_date(workspace, manifest.stages.get(stage.name), fingerprint)
        ):
            pending.append(stage.name)
    return pending


def run_document(
    workspace: Workspace,
    raw: Document,
    stages: list[Stage],
    settings: Settings,
    resources: Resources,
    progress: ProgressFn | None = None,
    stage_runner: Callable[..., StageOutcome] | None = None,
) -> DocumentReport:
    """Bring every stage of one document up to date; a failed stage blocks only the stages that read
    (directly or through others) what it writes. Stages run as a dependency graph, up to
    `build.stage_concurrency` at a time (flows.build.schedule; with an LLM, stages that lead to no
    request start once every stage that leads to one has started); outcomes and progress lines
    come in stage-list order."""
    manifest = load_manifest(workspace, raw.doc_id)
    manifest.input_sha256, manifest.source = raw.content_sha256, raw.owner_key
    started = time.perf_counter()
    report = DocumentReport(
        raw.doc_id, raw.title, n_chars=getattr(raw, "n_chars", None) or len(getattr(raw, "text", ""))
    )
    by_name = {stage.name: stage for stage in stages}
    failed: set[str] = set()
    failed_lock = threading.Lock()

    def advance(name: str) -> StageOutcome:
        """Runs once every stage upstream of `name` is done (their outcomes are final)."""
        stage = by_name[name]
        with failed_lock:
            blocker = blocked_by(stages, failed).get(stage.name)
        if blocker is not None:
            return StageOutcome(stage.name, "blocked", error=f"not run: {blocker} failed")
        fingerprint = fingerprint_for(stage, raw, manifest, settings, resources)
        if stage.name not in resources.force and is_up_to_date(
            workspace, manifest.stages.get(stage.name), fingerprint
        ):
            record = manifest.stages[stage.name]
            return StageOutcome(stage.name, "skipped", {t: o["rows"] for t, o in record.outputs.items()})
        if manifest.stages.get(stage.name) is not None and manifest.stages[stage.name].status == "partial":
            forget_missing_replies(workspace, raw.doc_id, stage.name, resources.llm)
        runner = stage_runner or run_stage
        outcome = runner(workspace, raw, stage, settings, resources, manifest, fingerprint)
        if outcome.status == "failed":
            with failed_lock:
                failed.add(stage.name)
            stale = invalidate_after_failure(workspace, manifest, stage)
            if stale:
                outcome.warnings.append(f"stale until rebuilt: {', '.join(stale)}")
        return outcome

    report.outcomes = run_graph(
        list(by_name),
        upstream(stages),
        advance,
        settings.build.stage_concurrency,
        (lambda _name, outcome: progress(raw.doc_id, outcome)) if progress is not None else None,
        requests_first(stages) if resources.llm is not None else None,
    )
    resources.flush_vectors()  # this document's new vectors survive a later crash
    report.seconds = time.perf_counter() - started
    return report


def run_stage(
    workspace: Workspace,
    raw: Document,
    stage: Stage,
    settings: Settings,
    resources: Resources,
    manifest: DocumentManifest,
    fingerprint: str,
) -> StageOutcome:
    """Run one stage for one document and commit its outputs, or record why it failed."""
    started = time.perf_counter()
    doc_id = raw.doc_id
    try:
        tables = {name: read_frame(workspace, name, doc_id) for name in sorted(stage.reads)}
        document = _document_text(raw, settings) if stage.reads_input else None
        ctx = StageContext(
            stage=stage.name,
            doc_id=doc_id,
            settings=settings,
            tables=tables,
            raw=document,
            embedder=resources.embedder if stage.needs_embedder else None,
            llm=resources.llm if stage.uses_llm else None,
        )
        produced = stage.run(ctx)
        warnings = list(produced.pop("_warnings", []) or [])
        details = dict(produced.pop("_details", {}) or {})  # stage figures worth keeping in the manifest
        outputs = validate_outputs(stage, produced)
        check_all(workspace, doc_id, outputs)
        lost = lost_items(outputs["failures"])
    except Exception as exc:  # any stage error becomes a failures row; the build carries on
        return _record_failure(workspace, manifest, stage, doc_id, exc, started)
    # An I/O error while writing fails this stage and the build goes on; a full disk (or quota) stops
    # the build with one line instead, since every later write would meet it too.
    try:
        return _commit_outputs(
            workspace,
            stage,
            settings,
            resources,
            manifest,
            fingerprint,
            outputs,
            lost,
            started,
            warnings,
            details,
        )
    except OSError as exc:
        if exc.errno in DISK_FULL:
            raise
        return _record_failure(workspace, manifest, stage, doc_id, exc, started)


def _record_failure(
    workspace: Workspace,
    manifest: DocumentManifest,
    stage: Stage,
    doc_id: str,
    exc: Exception,
    started: float,
) -> StageOutcome:
    """A failures row and a `failed` manifest record for the stage; when even these cannot be written
    (the disk is full), the outcome alone carries the error, so the build still reports it."""
    error = _one_line(exc)
    row = {
        "doc_id": doc_id,
        "stage": stage.name,
        "item_id": doc_id,
        "error": error,
        "payload": _short_trace(exc),
    }
    failure = StageRecord(
        fingerprint="",
        version=stage.version,
        config_hash="",
        outputs={},
        seconds=time.perf_counter() - started,
        finished_at=now_iso(),
        status="failed",
        error=error,
    )
    try:
        write_table(workspace, "failures", [row], doc_id, stage.name)
        _commit_record(workspace, manifest, stage.name, failure)
    except OSError as again:
        error = f"{error} (not recorded: {_one_line(again)})"[:500]
    return StageOutcome(stage.name, "failed", seconds=time.perf_counter() - started, error=error)


def _commit_outputs(
    workspace: Workspace,
    stage: Stage,
    settings: Settings,
    resources: Resources,
    manifest: DocumentManifest,
    fingerprint: str,
    outputs: dict[str, pa.Table],
    lost: int,
    started: float,
    warnings: list[str],
    details: dict[str, Any],
) -> StageOutcome:
    """Write the stage's tables and record them in the manifest."""
    doc_id = manifest.doc_id
    records: dict[str, dict[str, Any]] = {}
    for name, arrow in outputs.items():
        result = write_table(workspace, name, arrow, doc_id, stage.name if name in SIDE_TABLES else None)
        records[name] = {
            "path": str(result.path.relative_to(workspace.root)),
            "sha256": result.sha256,
            "rows": result.rows,
        }
    seconds = time.perf_counter() - started
    status = "partial" if lost else "built"
    if lost:
        warnings.append(
            f"{lost} item(s) lost: the LLM server did not answer or its reply was unusable "
            "(the next build asks them again)"
        )
    if stage.uses_llm:
        details["backend"] = resources.backend_identity(stage)
    record = StageRecord(
        fingerprint=fingerprint,
        version=stage.version,
        status=status,
        config_hash=stage_config_hash(stage, settings),
        outputs=records,
        seconds=round(seconds, 4),
        finished_at=now_iso(),
        details={
            **details,
            **({"warnings": warnings} if warnings else {}),
            # The settings themselves, so switches (e.g. ablations) are readable here.
            **({"config": getattr(settings, stage.config).model_dump(mode="json")} if stage.config else {}),
        },
    )
    _commit_record(workspace, manifest, stage.name, record)
    rows = {n: r["rows"] for n, r in records.items() if n not in SIDE_TABLES or r["rows"]}
    return StageOutcome(stage.name, status, rows, seconds, warnings=warnings, lost_items=lost)


def _commit_record(workspace: Workspace, manifest: DocumentManifest, stage: str, record: StageRecord) -> None:
    """Set one stage's record and save the manifest as one step (other stages may be saving too)."""
    with manifest.lock:
        manifest.stages[stage] = record
        save_manifest(workspace, manifest)


def _document_text(doc: Document, settings: Settings) -> RawDocument:
    """The text only the ingest stage needs: read from the input file when `doc` is a reference."""
    return doc if isinstance(doc, RawDocument) else read_document(doc, settings.build.max_document_chars)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


def _short_trace(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    return " <- ".join(f"{f.name}@{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(frames))
