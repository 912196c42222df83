"""Stale rows never pass for current ones: when a stage fails, its old outputs for that
document, and those of every stage that reads them (transitively), are deleted and their
manifest records marked `stale`, so `sql`, `ask` and `eval` see no rows built from an input
that has since changed, and `nkw inspect` lists the document as stale until it builds."""

from __future__ import annotations

from tasks.tables.manifest import DocumentManifest, StageRecord, now_iso, save_manifest
from flows.stages import STAGES, Stage, blocked_by
from tasks.tables.io import Workspace


def downstream_of(failed: Stage, graph: tuple[Stage, ...] | list[Stage] = STAGES) -> list[Stage]:
    """The stages after `failed` that read what it writes, directly or through another stage."""
    blocked = blocked_by(list(graph), {failed.name})
    return [stage for stage in graph if stage.name in blocked]


def delete_stage_outputs(workspace: Workspace, doc_id: str, stage: Stage, keep_failures: bool = False) -> int:
    """Delete the partitions `stage` wrote for `doc_id` (and its failures, unless kept); returns the
    number of files removed. Its llm_calls stay: they account for calls that were really made."""
    paths = [workspace.partition_path(table, doc_id) for table in stage.writes]
    if not keep_failures:
        paths.append(workspace.partition_path("failures", doc_id, stage.name))
    removed = 0
    for path in paths:
        if path.exists():
            path.unlink()
            removed += 1
    return removed


def invalidate_after_failure(
    workspace: Workspace,
    manifest: DocumentManifest,
    failed: Stage,
    graph: tuple[Stage, ...] | list[Stage] = STAGES,
) -> list[str]:
    """Remove the failed stage's old outputs and its readers'; returns the stages marked stale."""
    with manifest.lock:  # the document's other stages may be saving the manifest
        doc_id = manifest.doc_id
        # Its failures row was just written and stays.
        delete_stage_outputs(workspace, doc_id, failed, keep_failures=True)
        stale = []
        for stage in downstream_of(failed, graph):
            record = manifest.stages.get(stage.name)
            if record is None or record.status == "stale":
                continue
            delete_stage_outputs(workspace, doc_id, stage)
            manifest.stages[stage.name] = StageRecord(
                fingerprint="",
                version=record.version,
                config_hash="",
                outputs={},
                seconds=0.0,
                finished_at=now_iso(),
                status="stale",
                error=f"invalidated: {failed.name} failed on a changed input",
            )
            stale.append(stage.name)
        save_manifest(workspace, manifest)
    return stale
