"""`nkw remove`: delete documents from every table of a workspace, under the writer lock."""

from __future__ import annotations

import argparse
import json

from flows.cli.commands.common import UserError, workspace_from
from flows.build.remove import remove_documents, workspace_doc_ids
from tasks.tables.lock import WorkspaceLocked, WriterLock
from tasks.tables.partitions import write_listing
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    workspace = workspace_from(args)
    try:
        with WriterLock(workspace, "remove"):
            unknown = sorted(set(args.doc_ids) - workspace_doc_ids(workspace))
            if unknown:
                raise UserError(f"not in this workspace: {', '.join(unknown)} (see `nkw inspect`)")
            removed = remove_documents(workspace, list(dict.fromkeys(args.doc_ids)))
            write_listing(workspace)
    except WorkspaceLocked as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps({"removed": removed}))
    else:
        say(f"removed {len(removed)} document(s): {', '.join(removed)}")
    return 0
