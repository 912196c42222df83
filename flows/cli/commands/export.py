"""`nkw export`: a document's entity graph and episode DAG for Gephi, Cytoscape or networkx."""

from __future__ import annotations

import argparse
from pathlib import Path

from flows.cli.commands.common import UserError, workspace_from
from flows.inspection.views import MissingDocument, export_document


def run(args: argparse.Namespace) -> int:
    try:
        paths = export_document(workspace_from(args), args.doc, args.format, Path(args.out))
    except MissingDocument as exc:
        raise UserError(str(exc)) from None
    for path in paths:
        print(f"wrote {path}")
    return 0
