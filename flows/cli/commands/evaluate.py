"""`nkw eval`: answer, judge and score a benchmark's questions over a workspace."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from flows.answer_questions import QueryEngine
from flows.cli.argument_checks import MAX_SAMPLES
from flows.cli.commands.common import (
    EXIT_FAILED,
    UserError,
    api_key,
    file_problem,
    llm_client,
    prefect_environment,
    settings_from,
    workspace_from,
)
from flows.evaluate_benchmark import evaluate_with_prefect
from flows.evaluation.evaluate import evaluate, format_report
from flows.evaluation.judging import judge_client
from flows.evaluation.question_file import QuestionFileError
from flows.runtime import Meter
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    workspace = workspace_from(args)
    questions = Path(args.questions)
    problem = file_problem(questions, "questions file")
    if problem:  # a FIFO is not "not found": the cause named is the real one
        raise UserError(problem)
    if not 1 <= args.samples <= MAX_SAMPLES:
        raise UserError(f"--samples must be between 1 and {MAX_SAMPLES} (got {args.samples})")
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1 (got {args.limit})")
    if args.judge_model and not (args.judge_url or settings.llm.url):
        raise UserError("--judge-model needs a server: pass --judge-url URL (or --llm-url)")
    llm = llm_client(settings, workspace)
    judge = judge_client(settings, api_key(), workspace) or llm
    engine = QueryEngine(workspace, settings, llm=llm)
    meter = Meter("questions", quiet=args.quiet)
    options = dict(
        system=args.system,
        limit=args.limit,
        samples=args.samples,
        benchmark=args.benchmark,
        engine=engine,
        judge=judge,
        fresh=args.fresh,
        progress=meter,
    )
    try:
        if args.no_prefect:
            report = evaluate(workspace, questions, settings, **options)
        else:
            prefect_environment(args.verbose)
            report = evaluate_with_prefect(workspace, questions, settings, **options)
    except QuestionFileError as exc:
        raise UserError(str(exc)) from None
    finally:
        meter.close()
        for client in {id(c): c for c in (llm, judge) if c is not None}.values():
            client.close()
    for warning in report.warnings:
        say(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False, indent=1))
    else:
        say(format_report(report, verbose=args.verbose))
    if report.skipped_documents:
        skipped = int((report.rows["status"] != "answered").sum())
        say(
            f"error: {skipped} of {len(report.rows)} answer(s) not produced: "
            f"documents not in the workspace: {', '.join(report.skipped_documents)}",
            file=sys.stderr,
        )
        return EXIT_FAILED
    return 0
