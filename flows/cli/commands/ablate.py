"""`nkw ablate`: the ablation grid into `ablation_results`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from flows.ablate_flow import format_ablation, run_ablation
from flows.cli.argument_checks import MAX_SAMPLES
from flows.cli.commands.common import (
    UserError,
    file_problem,
    prefect_environment,
    settings_from,
    workspace_from,
)
from flows.evaluation.ablation import AblationError, parse_settings
from flows.evaluation.question_file import QuestionFileError
from flows.runtime import Meter
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    workspace = workspace_from(args)
    questions = [Path(q) for q in args.questions]
    problems = [p for p in (file_problem(q, "questions file") for q in questions) if p]
    if problems:  # a FIFO is not "not found": the cause named is the real one
        raise UserError("; ".join(problems))
    if not 1 <= args.samples <= MAX_SAMPLES:
        raise UserError(f"--samples must be between 1 and {MAX_SAMPLES} (got {args.samples})")
    try:
        names = parse_settings(args.settings)
    except AblationError as exc:
        raise UserError(str(exc)) from None
    if not args.no_prefect:
        prefect_environment(args.verbose)
    meter = Meter("settings x questions", quiet=args.quiet)
    try:
        report = run_ablation(
            workspace,
            questions,
            settings,
            names,
            limit=args.limit,
            samples=args.samples,
            system=args.system,
            fresh=args.fresh,
            use_prefect=not args.no_prefect,
            parallel=args.parallel,
            progress=meter,
        )
    except (AblationError, QuestionFileError) as exc:
        raise UserError(str(exc)) from None
    finally:
        meter.close()
    if args.json:
        print(
            json.dumps(
                {
                    "ablation_id": report.ablation_id,
                    "variants": report.variants,
                    "notes": report.notes,
                    "rows": json.loads(report.rows.to_json(orient="records")),
                    "scenes": report.scenes.to_dict(orient="records"),
                },
                ensure_ascii=False,
                indent=1,
            )
        )
    else:
        say(format_ablation(report))
    return 0
