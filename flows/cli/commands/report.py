"""`nkw report`: one self-contained HTML report of evaluation runs and ablations."""

from __future__ import annotations

import argparse
from pathlib import Path

from flows.cli.commands.common import UserError, workspace_from
from flows.inspection.report import ReportError, write_report


def run(args: argparse.Namespace) -> int:
    workspace = workspace_from(args)
    try:
        result = write_report(workspace, Path(args.out), args.run or None, args.ablation)
    except ReportError as exc:
        raise UserError(str(exc)) from None
    print(
        f"wrote {result['out']}: {result['runs']} run(s), {result['plots']} plot(s), "
        f"{result['bytes']:,} bytes"
    )
    return 0
