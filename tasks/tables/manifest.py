"""Build manifest: per document and stage, what was built from what, so unchanged stages skip.

This is orchestration state and the one place clocks are written.

A stage is up to date when its recorded fingerprint equals the one computed now (stage
version, config hash, prompt hash, backend identity and the hashes of the table partitions
it reads) and every partition it wrote is still on disk with the recorded hash. Clocks live
here only, never in table rows.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from schemas.ids import stable_hash
from tasks.files import read_text
from tasks.tables import ledger
from tasks.tables.io import Workspace, atomic_write_text, file_sha256


@dataclass
class StageRecord:
    fingerprint: str
    version: str
    config_hash: str
    outputs: dict[str, dict[str, Any]]  # table -> {"path": relative path, "sha256": ..., "rows": n}
    seconds: float
    finished_at: str
    status: str = "built"  # built | partial (items lost to an LLM outage; rebuilt next time) | failed
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class DocumentManifest:
    doc_id: str
    input_sha256: str = ""
    source: str = ""  # the owner key of the input (file path, or file#record id)
    stages: dict[str, StageRecord] = field(default_factory=dict)
    # Held to change `stages` and save: a document's stages can run in threads at the same time.
    lock: Any = field(default_factory=threading.RLock, repr=False, compare=False)

    def output_hash(self, table: str) -> str | None:
        """Hash of the partition of `table` last written for this document, by any stage."""
        with self.lock:
            for record in self.stages.values():
                if table in record.outputs:
                    return record.outputs[table]["sha256"]
        return None


def manifest_path(workspace: Workspace, doc_id: str) -> Path:
    return workspace.manifest_dir / f"{doc_id}.json"


def load_manifest(workspace: Workspace, doc_id: str) -> DocumentManifest:
    path = manifest_path(workspace, doc_id)
    try:
        data = json.loads(read_text(path))
        return _manifest_from(data, doc_id)
    except (OSError, ValueError, RecursionError, TypeError, AttributeError):
        # A missing, unreadable or hand-edited manifest only costs a rebuild of this document.
        return DocumentManifest(doc_id=doc_id)


def _manifest_from(data: Any, doc_id: str) -> DocumentManifest:
    """The manifest in `data`, or an empty one for `doc_id` when any part of it is not as written."""
    if not isinstance(data, dict) or data.get("doc_id") != doc_id or not isinstance(data.get("stages"), dict):
        return DocumentManifest(doc_id=doc_id)
    stages = {}
    for name, record in data["stages"].items():
        stage = StageRecord(**record)  # TypeError for a record of the wrong shape
        if not isinstance(stage.outputs, dict) or not all(
            isinstance(o, dict) and isinstance(o.get("path"), str) for o in stage.outputs.values()
        ):
            raise TypeError(f"stage {name}: outputs of the wrong shape")
        stages[name] = stage
    return DocumentManifest(
        doc_id=doc_id,
        input_sha256=str(data.get("input_sha256", "")),
        source=str(data.get("source", "")),
        stages=stages,
    )


def save_manifest(workspace: Workspace, manifest: DocumentManifest) -> None:
    with manifest.lock:  # one save at a time, so the last one written is the newest
        payload = {
            "doc_id": manifest.doc_id,
            "input_sha256": manifest.input_sha256,
            "source": manifest.source,
            "stages": {name: asdict(record) for name, record in manifest.stages.items()},
        }
        atomic_write_text(
            manifest_path(workspace, manifest.doc_id), json.dumps(payload, indent=1, sort_keys=True)
        )


def list_manifests(workspace: Workspace) -> list[DocumentManifest]:
    if not workspace.manifest_dir.is_dir():
        return []
    return [load_manifest(workspace, p.stem) for p in sorted(workspace.manifest_dir.glob("*.json"))]


def stage_fingerprint(
    *,
    stage: str,
    version: str,
    config_hash: str,
    prompt_hash: str,
    backend: str,
    inputs: dict[str, str | None],
) -> str:
    """Identity of one stage run for one document; equal fingerprints mean equal outputs."""
    return stable_hash(
        "stage", stage, version, config_hash, prompt_hash, backend, sorted(inputs.items()), length=32
    )


def is_up_to_date(workspace: Workspace, record: StageRecord | None, fingerprint: str) -> bool:
    if record is None or record.status != "built" or record.fingerprint != fingerprint:
        return False
    for output in record.outputs.values():
        path = workspace.root / output["path"]
        if not path.exists() or file_sha256(path) != output["sha256"]:
            return False
        # Readers trust what the ledger records: a file it no longer vouches for (its entry deleted
        # or edited) is as good as missing to them, so the stage is built again and re-recorded.
        recorded = ledger.current_sha256(workspace.root, path)
        if ledger.has_ledger(workspace.root) and recorded != output["sha256"]:
            return False
    return True


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
