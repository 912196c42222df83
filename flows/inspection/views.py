"""`nkw view` and `nkw export`: read one document's bundle from a workspace and write the
self-contained HTML view or the graph files. Returns what was written; the CLI prints it."""

from __future__ import annotations

from pathlib import Path

from tasks.tables.io import Workspace, read_frame
from tasks.views.bundle import load_bundle
from tasks.views.export import export_graphs
from tasks.views.html import write_view


class MissingDocument(LookupError):
    """The workspace holds no document with this id."""


def _check_document(workspace: Workspace, doc_id: str) -> None:
    known = sorted(read_frame(workspace, "documents", columns=["doc_id"])["doc_id"])
    if doc_id not in known:
        shown = ", ".join(known[:8]) + (" ..." if len(known) > 8 else "")
        raise MissingDocument(f"no document {doc_id!r} in the workspace; documents: {shown or '(none)'}")


def view_document(workspace: Workspace, doc_id: str, out_dir: Path) -> Path:
    _check_document(workspace, doc_id)
    return write_view(load_bundle(workspace, doc_id), out_dir)


def export_document(workspace: Workspace, doc_id: str, fmt: str, out: Path) -> list[Path]:
    _check_document(workspace, doc_id)
    return export_graphs(load_bundle(workspace, doc_id), fmt, out)
