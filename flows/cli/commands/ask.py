"""`nkw ask`: answer one question, or a file of questions with one load, with cited scenes."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from flows.cli import output as cli_output
from flows.answer_questions import QueryEngine
from flows.cli.commands.common import EXIT_FAILED, UserError, llm_client, settings_from, workspace_from
from flows.serving.question_batch import QuestionBatchError, read_question_batch
from flows.evaluation.question_checks import build_gaps, question_problem
from tasks.query.store.doc_index import DocumentNotBuilt
from tasks.terminal import safe_text, say


def run(args: argparse.Namespace) -> int:
    if (args.question is None) == (args.questions is None):
        raise UserError("give one QUESTION, or --questions FILE (one question per line, or JSON lines)")
    if args.questions and args.option:
        raise UserError(
            '--option goes with a single QUESTION; in --questions FILE give "options" per JSON line'
        )
    if args.question and (problem := question_problem(args.question)):
        raise UserError(f"{problem}; ask a question in words")
    if any(not (option or "").strip() for option in args.option or []):
        raise UserError("an --option is empty")
    settings = settings_from(args)
    workspace = workspace_from(args)
    default_doc = args.doc or cli_output.only_document(workspace)
    try:
        batch = read_question_batch(Path(args.questions)) if args.questions else None
    except QuestionBatchError as exc:
        raise UserError(str(exc)) from None
    items = batch or [(None, args.question, args.option or None)]
    if any((doc or default_doc) is None for doc, _, _ in items):
        if not cli_output.document_ids(workspace):
            raise UserError(
                f"workspace {args.workspace} holds no documents; build one with `nkw build PATH -w ...`"
            )
        raise UserError("this workspace holds several documents; choose one with --doc (see `nkw inspect`)")
    llm = llm_client(settings, workspace)
    engine = QueryEngine(workspace, settings, llm=llm)  # one load of the model and bundles for every question
    failed = 0
    try:
        for number, (doc, question, options) in enumerate(items, start=1):
            doc_id = doc or default_doc
            problem = question_problem(question)
            try:
                if problem:
                    raise ValueError(f"{problem}; ask a question in words")
                answer = engine.ask(doc_id, question, options, args.system)
            except (DocumentNotBuilt, ValueError) as exc:
                if batch is None:
                    raise UserError(str(exc)) from None
                failed += 1
                print(
                    json.dumps({"question": question, "error": str(exc)}, ensure_ascii=False)
                    if args.json
                    else safe_text(f"error: question {number}: {exc}"),
                    flush=True,
                )
                continue
            gaps = build_gaps(workspace, doc_id)
            if gaps:
                say(f"warning: {gaps}", file=sys.stderr)
            if args.json:
                payload = {**answer.to_json(), **({"warning": gaps} if gaps else {})}
                text = json.dumps(payload, ensure_ascii=False, indent=None if batch else 1)
            else:
                text = cli_output.answer_text(answer, show_trace=args.trace, show_notes=args.verbose)
                if batch:
                    text = f"Q{number}: {question}\n{text}\n"
            print(text if args.json else safe_text(text), flush=True)
            if batch is None and not args.json and args.verbose:
                # Fixed start-up (imports, embedding model, bundle load) apart from the answer's own latency.
                startup = time.perf_counter() - args.started - answer.latency_ms / 1000
                model, bundle = engine.load_seconds["model"], engine.load_seconds["bundle"]
                print(
                    f"start-up {startup:.2f} s (imports and set-up {startup - model - bundle:.2f} s, "
                    f"embedding model {model:.2f} s, bundle {bundle:.2f} s); "
                    f"answer {answer.latency_ms:.0f} ms",
                    file=sys.stderr,
                )
    finally:
        if llm is not None:
            llm.close()
    return EXIT_FAILED if failed else 0
