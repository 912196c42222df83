"""`nkw export`: a document's (or the whole workspace's) entity graph, directed interaction graph and
episode DAG for Gephi, Cytoscape or networkx, written into the --out folder as DOC.entities.FORMAT,
DOC.interactions.FORMAT and DOC.episodes.FORMAT (the workspace's name instead of DOC without --doc),
and its summary hierarchy as DOC.summaries.md (to read) and DOC.summaries.csv (one row per quote)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from flows.cli.commands.common import UserError, workspace_from
from flows.cli.commands.outputs import legacy_file
from flows.inspection.views import MissingDocument, export_document
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    name = args.doc or workspace_from(args).root.name
    example = f"{name}.entities.{args.format}"
    legacy = legacy_file(args.out, (".graphml", ".gexf", ".csv"), "export", example)
    # The export names its files after the stem it is given: the folder's DOC is that stem.
    stem = legacy if legacy is not None else Path(args.out) / name
    try:
        paths = export_document(workspace_from(args), args.doc, args.format, stem)
    except MissingDocument as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps({"written": [str(p) for p in paths]}))
    for path in [] if args.json else paths:
        say(f"wrote {path}")
    return 0
