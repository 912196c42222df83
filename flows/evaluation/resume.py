"""Resumable evaluation runs: each document's finished answers (qa_answers, qa_traces, llm_calls and
failures rows) are kept as a checkpoint under the workspace cache as soon as the document is done, so
an interrupted run answers only the documents it had not finished. `--fresh` ignores them.

A checkpoint holds for the document's bundle it was answered from: the run id names the questions
and settings, not the tables, so a rebuild that changed any of the document's tables (another
setting, a new stage version, `--force`) makes its answers stale and they are answered again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from schemas.ids import stable_hash
from tasks.files import read_text
from tasks.tables.io import Workspace, atomic_write_text
from tasks.tables.manifest import load_manifest


def checkpoint_dir(workspace: Workspace, run_id: str) -> Path:
    return workspace.cache_dir / "eval" / run_id


def _path(workspace: Workspace, run_id: str, doc_id: str) -> Path:
    return checkpoint_dir(workspace, run_id) / f"{stable_hash('doc', doc_id)}.json"


def bundle_digest(workspace: Workspace, doc_id: str) -> str:
    """The content of a document's built tables, as its manifest records them."""
    stages = load_manifest(workspace, doc_id).stages
    return stable_hash(
        "bundle",
        {
            name: sorted((table, str(output.get("sha256"))) for table, output in record.outputs.items())
            for name, record in sorted(stages.items())
        },
    )


def load_checkpoint(
    workspace: Workspace, run_id: str, doc_id: str, qids: list[str], samples: int
) -> dict[str, list[dict]] | None:
    """A finished document's rows, when they cover exactly these questions and samples and were
    answered from the document's tables as they are now."""
    try:
        data = json.loads(read_text(_path(workspace, run_id, doc_id)))
    except (OSError, ValueError):
        return None
    if data.get("doc_id") != doc_id or data.get("qids") != qids or data.get("samples") != samples:
        return None
    if data.get("bundle") != bundle_digest(workspace, doc_id):
        return None
    rows = data.get("result")
    return rows if isinstance(rows, dict) else None


def save_checkpoint(
    workspace: Workspace,
    run_id: str,
    doc_id: str,
    qids: list[str],
    samples: int,
    result: dict[str, list[dict[str, Any]]],
) -> None:
    path = _path(workspace, run_id, doc_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    bundle = bundle_digest(workspace, doc_id)
    payload = {"doc_id": doc_id, "qids": qids, "samples": samples, "bundle": bundle, "result": result}
    atomic_write_text(path, json.dumps(payload, ensure_ascii=False, default=str))


def clear_checkpoints(workspace: Workspace, run_id: str) -> None:
    shutil.rmtree(checkpoint_dir(workspace, run_id), ignore_errors=True)
