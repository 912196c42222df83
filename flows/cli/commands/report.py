"""`nkw report`: one self-contained HTML report of evaluation runs and ablations (--out folder gets
report.html)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from flows.cli.commands.common import UserError, workspace_from
from flows.cli.commands.outputs import legacy_file
from flows.inspection.report import ReportError, write_report
from tasks.terminal import say

FILE_NAME = "report.html"


def run(args: argparse.Namespace) -> int:
    workspace = workspace_from(args)
    out = legacy_file(args.out, (".html", ".htm"), "report", FILE_NAME) or Path(args.out) / FILE_NAME
    try:
        result = write_report(workspace, out, args.run or None, args.ablation)
    except ReportError as exc:
        raise UserError(str(exc)) from None
    if args.json:
        print(json.dumps(result))
    else:
        say(
            f"wrote {result['out']}: {result['runs']} run(s), {result['plots']} plot(s), "
            f"{result['bytes']:,} bytes"
        )
    return 0
