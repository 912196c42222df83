"""Run the stage graph for one document: skip what the manifest says is up to date, read
inputs, call the stage, check contracts, write outputs atomically, record the manifest.

Plain functions (no Prefect) so they are testable directly; `flows.build_corpus` wraps them
in Prefect tasks.
"""

from __future__ import annotations

import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import pyarrow as pa

from tasks.tables.manifest import (DocumentManifest, StageRecord, is_up_to_date, load_manifest, now_iso, save_manifest,
                            stage_fingerprint)
from flows.stages import Stage
from schemas.config import Settings
from tasks.stage import StageContext
from tasks.tables.contracts import ContractError, check_contracts
from tasks.embeddings import Embedder, embedder_identity
from schemas.ids import stable_hash
from tasks.ingest.ingest_documents import RawDocument
from tasks.llm.prompts import prompts_hash
from tasks.vector_store import caching
from tasks.tables.io import SchemaError, Workspace, read_frame, read_table, to_arrow, write_table

SIDE_TABLES = ("failures", "llm_calls")  # tables every stage may append to, partitioned by stage


@dataclass
class StageOutcome:
    stage: str
    status: str  # built | skipped | failed | blocked
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    error: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class DocumentReport:
    doc_id: str
    title: str
    outcomes: list[StageOutcome] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(o.status == "failed" for o in self.outcomes)


@dataclass
class Resources:
    """Clients shared by all documents of a build, created on first use."""

    settings: Settings
    embedder_factory: Callable[[], Embedder]
    llm: Any = None  # tasks.llm.client.LLMClient when an LLM URL is configured
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
            sampling = stable_hash(llm.temperature, llm.max_tokens, llm.max_tokens_retry, llm.enable_thinking, length=8)
            parts.append(f"llm:{self.llm.model}:{sampling}" if self.llm is not None else "heuristic")
        return "|".join(parts)


ProgressFn = Callable[[str, StageOutcome], None]


def fingerprint_for(stage: Stage, raw: RawDocument, manifest: DocumentManifest, settings: Settings,
                    resources: Resources) -> str:
    if stage.name == "ingest_documents":
        inputs: dict[str, str | None] = {"raw": raw.fingerprint}
    else:
        inputs = {table: manifest.output_hash(table) for table in sorted(set(stage.reads) | {"documents"})}
    return stage_fingerprint(
        stage=stage.name, version=stage.version,
        config_hash=settings.section_hash(stage.config) if stage.config else "",
        prompt_hash=prompts_hash(stage.prompts), backend=resources.backend_identity(stage), inputs=inputs)


def pending_stages(workspace: Workspace, raw: RawDocument, stages: list[Stage], settings: Settings,
                   resources: Resources) -> list[str]:
    """Stages that would run for this document, judged from the manifest alone."""
    manifest = load_manifest(workspace, raw.doc_id)
    pending: list[str] = []
    for stage in stages:
        if pending or not is_up_to_date(workspace, manifest.stages.get(stage.name),
                                         fingerprint_for(stage, raw, manifest, settings, resources)):
            pending.append(stage.name)
    return pending


def run_document(workspace: Workspace, raw: RawDocument, stages: list[Stage], settings: Settings,
                 resources: Resources, progress: ProgressFn | None = None,
                 stage_runner: Callable[..., StageOutcome] | None = None) -> DocumentReport:
    """Bring every stage of one document up to date; a failed stage blocks the ones after it."""
    manifest = load_manifest(workspace, raw.doc_id)
    manifest.input_sha256, manifest.source = raw.content_sha256, raw.owner_key
    report = DocumentReport(raw.doc_id, raw.title)
    blocked_by: str | None = None
    for stage in stages:
        if blocked_by is not None:
            outcome = StageOutcome(stage.name, "blocked", error=f"not run: {blocked_by} failed")
        else:
            fingerprint = fingerprint_for(stage, raw, manifest, settings, resources)
            if is_up_to_date(workspace, manifest.stages.get(stage.name), fingerprint):
                record = manifest.stages[stage.name]
                outcome = StageOutcome(stage.name, "skipped", {t: o["rows"] for t, o in record.outputs.items()})
            else:
                runner = stage_runner or run_stage
                outcome = runner(workspace, raw, stage, settings, resources, manifest, fingerprint)
            if outcome.status == "failed":
                blocked_by = stage.name
        report.outcomes.append(outcome)
        if progress is not None:
            progress(raw.doc_id, outcome)
    resources.flush_vectors()  # this document's new vectors survive a later crash
    return report


def run_stage(workspace: Workspace, raw: RawDocument, stage: Stage, settings: Settings, resources: Resources,
              manifest: DocumentManifest, fingerprint: str) -> StageOutcome:
    """Run one stage for one document and commit its outputs, or record why it failed."""
    started = time.perf_counter()
    doc_id = raw.doc_id
    try:
        tables = {name: read_frame(workspace, name, doc_id) for name in sorted(set(stage.reads) | {"documents"})
                  if not (stage.name == "ingest_documents")}
        ctx = StageContext(stage=stage.name, doc_id=doc_id, settings=settings, tables=tables, raw=raw,
                           embedder=resources.embedder if stage.needs_embedder else None,
                           llm=resources.llm if stage.uses_llm else None)
        produced = stage.run(ctx)
        warnings = list(produced.pop("_warnings", []) or [])
        details = dict(produced.pop("_details", {}) or {})  # stage figures worth keeping in the manifest
        outputs = _validate_outputs(stage, produced)
        _check_all(workspace, doc_id, outputs)
    except Exception as exc:  # any stage error becomes a failures row; the build carries on
        error = _one_line(exc)
        write_table(workspace, "failures", [{"doc_id": doc_id, "stage": stage.name, "item_id": doc_id,
                                             "error": error, "payload": _short_trace(exc)}], doc_id, stage.name)
        manifest.stages[stage.name] = StageRecord(fingerprint="", version=stage.version, config_hash="", outputs={},
                                                  seconds=time.perf_counter() - started, finished_at=now_iso(),
                                                  status="failed", error=error)
        save_manifest(workspace, manifest)
        return StageOutcome(stage.name, "failed", seconds=time.perf_counter() - started, error=error)
    records: dict[str, dict[str, Any]] = {}
    for name, arrow in outputs.items():
        result = write_table(workspace, name, arrow, doc_id, stage.name if name in SIDE_TABLES else None)
        records[name] = {"path": str(result.path.relative_to(workspace.root)), "sha256": result.sha256, "rows": result.rows}
    seconds = time.perf_counter() - started
    manifest.stages[stage.name] = StageRecord(
        fingerprint=fingerprint, version=stage.version,
        config_hash=settings.section_hash(stage.config) if stage.config else "", outputs=records, seconds=round(seconds, 4),
        finished_at=now_iso(), details={**details, **({"warnings": warnings} if warnings else {}),
                                        # The settings themselves, so switches (e.g. ablations) are readable here.
                                        **({"config": getattr(settings, stage.config).model_dump(mode="json")}
                                           if stage.config else {})})
    save_manifest(workspace, manifest)
    return StageOutcome(stage.name, "built", {n: r["rows"] for n, r in records.items() if n not in SIDE_TABLES or r["rows"]},
                        seconds, warnings=warnings)


def _validate_outputs(stage: Stage, produced: dict[str, Any]) -> dict[str, pa.Table]:
    unexpected = set(produced) - set(stage.writes) - set(SIDE_TABLES)
    missing = set(stage.writes) - set(produced)
    if unexpected or missing:
        raise SchemaError(f"stage {stage.name} returned tables {sorted(produced)}; declared writes {list(stage.writes)}")
    outputs = {name: to_arrow(name, produced[name]) for name in stage.writes}
    # Every stage run replaces its failures partition, so fixed problems disappear on rebuild.
    outputs["failures"] = to_arrow("failures", produced.get("failures", []))
    if "llm_calls" in produced:
        outputs["llm_calls"] = to_arrow("llm_calls", produced["llm_calls"])
    return outputs


def _check_all(workspace: Workspace, doc_id: str, outputs: dict[str, pa.Table]) -> None:
    def resolve(table: str) -> pa.Table | None:
        if table in outputs:
            return outputs[table]
        return read_table(workspace, table, doc_id) if workspace.partitions(table, doc_id) else None

    problems = [p for name, rows in outputs.items() for p in check_contracts(name, rows, resolve)]
    if problems:
        raise ContractError("; ".join(problems[:5]))


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]


def _short_trace(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)[-3:]
    return " <- ".join(f"{f.name}@{f.filename.rsplit('/', 1)[-1]}:{f.lineno}" for f in reversed(frames))

