"""`nkw view` and `nkw export`: read one document's bundle (or, for export, every document's) from
a workspace and write the self-contained HTML view or the graph files. Returns what was written;
the CLI prints it."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tasks.summaries.export import write_summaries
from tasks.tables.io import Workspace, read_frame
from tasks.views.bundle import load_bundle
from tasks.views.export import bundle_graphs, write_graphs
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


def export_document(workspace: Workspace, doc_id: str | None, fmt: str, out: Path) -> list[Path]:
    """One document's graphs and summaries, or with `doc_id` None every document's side by side."""
    if doc_id is not None:
        _check_document(workspace, doc_id)
        written = write_graphs(bundle_graphs([load_bundle(workspace, doc_id)]), fmt, out)
        return written + export_summaries(workspace, [doc_id], out)
    doc_ids = sorted(read_frame(workspace, "documents", columns=["doc_id"])["doc_id"])
    if not doc_ids:
        raise MissingDocument("the workspace holds no documents; build some first (nkw build)")
    bundles = (load_bundle(workspace, doc_id) for doc_id in doc_ids)
    written = write_graphs(bundle_graphs(bundles, workspace.root.name), fmt, out)
    return written + export_summaries(workspace, doc_ids, out)


def export_summaries(workspace: Workspace, doc_ids: list[str], out: Path) -> list[Path]:
    """The documents' summary hierarchy next to the graphs (`.summaries.md` and `.summaries.csv`)."""
    stem = out.with_suffix("") if out.suffix.lower() in (".graphml", ".gexf", ".csv") else out
    frames = {
        name: pd.concat([read_frame(workspace, name, doc_id) for doc_id in doc_ids], ignore_index=True)
        for name in ("documents", "summaries", "summary_quotes", "sections")
    }
    titles = dict(zip(frames["documents"]["doc_id"], frames["documents"]["title"]))
    return write_summaries(titles, frames["summaries"], frames["summary_quotes"], frames["sections"], stem)
