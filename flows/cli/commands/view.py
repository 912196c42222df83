"""`nkw view`: a self-contained HTML page of one document's bundle, written into the --out folder."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from flows.cli.commands.common import UserError, workspace_from
from flows.inspection.views import MissingDocument, view_document
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    try:
        path = view_document(workspace_from(args), args.doc, Path(args.out))
    except MissingDocument as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps({"written": [str(path)]}))
    else:
        say(f"wrote {path}")
    return 0
