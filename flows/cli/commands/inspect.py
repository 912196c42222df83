"""`nkw inspect`: rows per table and document, stage status, failures and figures."""

from __future__ import annotations

import argparse
import json

from flows.cli.commands.common import workspace_from
from flows.inspection.inspect_workspace import inspect_json, inspect_text
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    workspace = workspace_from(args)
    if args.json:
        print(json.dumps(inspect_json(workspace), ensure_ascii=False, indent=1))
    else:
        say(inspect_text(workspace))
    return 0
