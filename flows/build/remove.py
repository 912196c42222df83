"""`nkw remove` and `nkw build --prune`: the workspace mirrors its corpus.

Removing a document deletes its partitions of every table (failures and LLM accounting
included), its rows in evaluation runs, its manifest, and the cached LLM replies no other
document used. Callers hold the writer lock (tasks.tables.lock).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from schemas.tables import TABLES
from tasks.llm.client.cache import LLMCache
from tasks.tables.io import Workspace, partition_owner, read_table, write_table
from tasks.tables.manifest import list_manifests, manifest_path

LLM_CACHE_DIR = "llm"


def workspace_doc_ids(workspace: Workspace) -> set[str]:
    """Every document the workspace holds anything of: manifests, documents rows, failures."""
    ids = {m.doc_id for m in list_manifests(workspace)}
    for name in ("documents", "failures"):
        ids |= {partition_owner(name, path.stem) for path in workspace.partitions(name)}
    return ids


def _document_files(workspace: Workspace, doc_id: str) -> list:
    files = []
    for name, table_spec in TABLES.items():
        if table_spec.partition == "run":
            continue
        files += workspace.partitions(name, doc_id)
    return files


def remove_documents(workspace: Workspace, doc_ids: list[str]) -> list[str]:
    """Delete everything of `doc_ids`; returns the ids that had anything to delete."""
    removed = []
    if not doc_ids:
        return removed
    cache_keys = _llm_keys(workspace, set(doc_ids))
    for doc_id in doc_ids:
        files = _document_files(workspace, doc_id)
        manifest = manifest_path(workspace, doc_id)
        if not files and not manifest.exists():
            continue
        # The manifest goes first: a removal cut short leaves files no manifest vouches for, which a
        # rebuild replaces, never a manifest claiming files that are gone.
        manifest.unlink(missing_ok=True)
        for path in files:
            path.unlink(missing_ok=True)
        removed.append(doc_id)
    _remove_from_runs(workspace, set(doc_ids))
    _drop_cached_replies(workspace, cache_keys)
    return removed


def _llm_keys(workspace: Workspace, doc_ids: set[str]) -> set[str]:
    """Cache keys used only by the documents being removed."""
    mine: set[str] = set()
    others: set[str] = set()
    for doc_id in sorted({partition_owner("llm_calls", p.stem) for p in workspace.partitions("llm_calls")}):
        keys = read_table(workspace, "llm_calls", doc_id, ["call_key"]).column("call_key").to_pylist()
        (mine if doc_id in doc_ids else others).update(k for k in keys if k)
    return mine - others


def _drop_cached_replies(workspace: Workspace, keys: set[str]) -> None:
    cache = LLMCache(workspace.cache_dir / LLM_CACHE_DIR)
    for key in keys:
        try:
            cache.path(key).unlink(missing_ok=True)
        except ValueError:
            continue  # not a cache key (e.g. a failed call)


def _remove_from_runs(workspace: Workspace, doc_ids: set[str]) -> None:
    """Evaluation runs keep their other documents' answers and traces."""
    for path in workspace.partitions("qa_answers"):
        answers = read_table(workspace, "qa_answers", path.stem)
        mask = pc.is_in(answers.column("doc_id"), value_set=_array(doc_ids))
        if not pc.any(mask).as_py():
            continue
        gone = set(answers.filter(mask).column("qid").to_pylist())
        write_table(workspace, "qa_answers", answers.filter(pc.invert(mask)), path.stem)
        traces = read_table(workspace, "qa_traces", path.stem)
        if traces.num_rows:
            keep = pc.invert(pc.is_in(traces.column("qid"), value_set=_array(gone)))
            write_table(workspace, "qa_traces", traces.filter(keep), path.stem)


def _array(values: set[str]) -> pa.Array:
    return pa.array(sorted(values), type=pa.string())
