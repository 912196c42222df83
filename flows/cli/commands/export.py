"""`nkw export`: a document's entity graph and episode DAG for Gephi, Cytoscape or networkx, written
into the --out folder as DOC.entities.FORMAT and DOC.episodes.FORMAT."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from flows.cli.commands.common import UserError, workspace_from
from flows.cli.commands.outputs import legacy_file
from flows.inspection.views import MissingDocument, export_document


def run(args: argparse.Namespace) -> int:
    example = f"{args.doc}.entities.{args.format}"
    legacy = legacy_file(args.out, (".graphml", ".gexf", ".csv"), "export", example)
    # The export names its files after the stem it is given: the folder's DOC is that stem.
    stem = legacy if legacy is not None else Path(args.out) / args.doc
    try:
        paths = export_document(workspace_from(args), args.doc, args.format, stem)
    except MissingDocument as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps({"written": [str(p) for p in paths]}))
    for path in [] if args.json else paths:
        print(f"wrote {path}")
    return 0
