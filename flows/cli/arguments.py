"""Every `nkw` command's flags, declared once: the parser that `nkw`, its help and the docs check use.

Nothing here imports a command's module, so `nkw --help` and a usage error answer at once.
"""

from __future__ import annotations

import argparse

from flows.cli.parser import Parser

# flows.answer_questions.SYSTEMS (a test keeps them equal): importing it here would load the query stack
SYSTEMS = ("nkw", "hybrid", "hybrid_fine")


def _workspace(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", required=True, help="workspace folder (tables, manifest, cache)")


def _debug(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")


def _json(parser: argparse.ArgumentParser, what: str = "the result") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} as JSON")


def _out(parser: argparse.ArgumentParser, writes: str) -> None:
    parser.add_argument("--out", "-o", required=True, metavar="DIR", help=f"output folder (gets {writes})")


def _progress(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--quiet", "-q", action="store_true", help="no progress on stderr (results and errors still print)"
    )


def _common(parser: argparse.ArgumentParser, workspace: bool = True) -> None:
    if workspace:
        _workspace(parser)
    parser.add_argument("--config", help="TOML settings file (one section per stage)")
    parser.add_argument(
        "--llm-url",
        action="append",
        help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1 (default: no LLM); given again: more "
        "servers of the same model, each document's requests on one, moved when it stops answering",
    )
    parser.add_argument("--model", help="model name served at --llm-url")
    parser.add_argument(
        "--local-llm",
        nargs="?",
        const="",
        metavar="MODEL",
        help="serve a GGUF model with llama.cpp for this command only (0.5b, 1.5b, smollm2-135m or a "
        "file; default [local_llm] model) and use it as --llm-url; see docs/local_model.md",
    )
    parser.add_argument(
        "--embeddings", choices=["minilm", "hashing", "http"], help="embedding backend (default minilm)"
    )
    parser.add_argument(
        "--embeddings-url", help="OpenAI-compatible /v1/embeddings server (with --embeddings http)"
    )
    parser.add_argument(
        "--embeddings-model",
        help="embedding model: a name served at --embeddings-url (with --embeddings http), or a local "
        "sentence-transformers model folder (default: the bundled all-MiniLM-L6-v2)",
    )
    parser.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="show Prefect logs (eval: also list questions whose gold could not be mapped; ask: also "
        "the answer's notes and the start-up times)",
    )
    _debug(parser)


def _ablations(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("ablations (paper §4)")
    group.add_argument(
        "--follow-up-rounds", type=int, choices=[0, 1, 2], help="agent follow-up rounds (default 2)"
    )
    group.add_argument("--no-graph-tools", action="store_true", help="remove the graph-channel tools")
    group.add_argument("--no-reading-skills", action="store_true", help="inject no reading-skill cards")
    group.add_argument(
        "--no-hierarchy", action="store_true", help="hide episodes and storylines from every tool"
    )
    group.add_argument(
        "--no-attributes",
        action="store_true",
        help="hide entity attributes and attribute-built profiles (atomic facts stay)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="nkw",
        description="Narrative Knowledge Weaver: narrative knowledge bundles and QA.",
        epilog="`nkw COMMAND --help` shows a command's flags.",
    )
    parser.add_argument("--version", action="version", version="nkw 0.1.0")
    # Not required: a bare `nkw` prints this help instead of an error.
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    build = commands.add_parser(
        "build", help="ingest documents and build every table (skips what is unchanged)"
    )
    build.add_argument(
        "paths", nargs="*", metavar="PATH", help="text/Markdown/screenplay files, folders, or documents.jsonl"
    )
    _common(build)
    build.add_argument("--concurrency", type=int, help="documents built at the same time")
    build.add_argument("--stages", help="comma-separated stage names to run (default: all)")
    build.add_argument("--until", help="run stages up to and including this one")
    build.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    build.add_argument(
        "--prune", action="store_true", help="remove every document that is not in this input set"
    )
    build.add_argument(
        "--runner",
        choices=["thread", "process", "dask"],
        default="thread",
        help="Prefect task runner: thread pool (default), worker processes on this machine (CPU work "
        "in parallel), or Dask (prefect-dask)",
    )
    build.add_argument(
        "--dask-address",
        help="scheduler of an existing Dask cluster, e.g. tcp://host:8786 "
        "(default with --runner dask: a local cluster of --concurrency processes)",
    )
    build.add_argument(
        "--dry-run", action="store_true", help="estimate LLM calls and tokens per stage; change nothing"
    )
    build.add_argument(
        "--price-per-million",
        type=float,
        default=None,
        help="with --dry-run: print the cost at this price per million tokens",
    )
    build.add_argument(
        "--retry-failed",
        action="store_true",
        help="rebuild the documents with partial or failed stages (no PATH needed: "
        "their recorded sources); cached LLM replies cost nothing, so only the "
        "failed items are asked again",
    )
    build.add_argument("--force", metavar="STAGE[,STAGE]", help="rebuild these stages even when up to date")
    build.add_argument(
        "--allow-offline-fallback",
        action="store_true",
        help="if the LLM server does not answer, build LLM stages with the offline heuristics "
        "(labelled heuristic) instead of stopping",
    )
    _progress(build)
    _json(build, "the build report")
    build.set_defaults(command="build")

    remove = commands.add_parser(
        "remove", help="delete documents from every table, the manifest and the caches"
    )
    remove.add_argument("doc_ids", nargs="+", metavar="DOC_ID", help="documents to delete (`nkw inspect`)")
    _workspace(remove)
    _json(remove, "the removed document ids")
    _debug(remove)
    remove.set_defaults(command="remove")

    ask = commands.add_parser("ask", help="answer a question with cited sections")
    ask.add_argument("question", nargs="?", help="the question (or use --questions FILE)")
    _common(ask)
    ask.add_argument(
        "--questions",
        metavar="FILE",
        help="answer every question in FILE with one load: a question per line, or JSON lines with "
        "question, doc_id and options",
    )
    ask.add_argument("--doc", help="document id (optional when the workspace holds one document)")
    ask.add_argument("--option", action="append", help="a multiple-choice option (repeat for each)")
    ask.add_argument("--system", default="nkw", choices=SYSTEMS, help="answering system (default nkw)")
    _ablations(ask)
    ask.add_argument("--trace", action="store_true", help="print every tool call")
    _json(ask, "each answer (a JSON line per question with --questions)")
    ask.set_defaults(command="ask")

    evaluate = commands.add_parser("eval", help="answer and score a benchmark questions file")
    _common(evaluate)
    evaluate.add_argument("--questions", required=True, help="questions.jsonl in the shared benchmark format")
    evaluate.add_argument("--system", default="nkw", choices=SYSTEMS, help="answering system (default nkw)")
    _ablations(evaluate)
    evaluate.add_argument(
        "--limit", type=int, help="only N questions, taken in turn from each document (file order)"
    )
    evaluate.add_argument("--samples", type=int, default=1, help="answers sampled per question (Pass@N)")
    evaluate.add_argument("--benchmark", help="benchmark name in reports (default: from the file path)")
    evaluate.add_argument(
        "--judge-url", help="OpenAI-compatible server of the correctness judge (default: --llm-url)"
    )
    evaluate.add_argument("--judge-model", help="judge model name (default: --model)")
    evaluate.add_argument(
        "--fresh", action="store_true", help="answer and judge again; ignore the run's stored work"
    )
    evaluate.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    _progress(evaluate)
    _json(evaluate, "the scores")
    evaluate.set_defaults(command="evaluate")

    serve = commands.add_parser(
        "serve", help="local HTTP API (POST /ask, GET /documents, GET /health), views at /, API docs at /docs"
    )
    _common(serve)
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument(
        "--port",
        type=int,
        default=8765,
        help="port to listen on (default 8765; 0: a free one, shown when ready)",
    )
    serve.add_argument(
        "--concurrency",
        type=int,
        default=2,
        dest="serve_concurrency",
        help="questions answered at the same time (default 2)",
    )
    serve.add_argument(
        "--queue", type=int, default=16, help="questions allowed to wait before 503 busy (default 16)"
    )
    serve.add_argument(
        "--lazy",
        action="store_true",
        help="load each document on its first question and keep the last few loaded (default: load "
        "every document at startup and keep them all; about 65 MB a screenplay)",
    )
    serve.add_argument(
        "--allow-host",
        action="append",
        help="another Host name clients may use (repeat; default: the --host address, localhost on loopback)",
    )
    serve.set_defaults(command="serve")

    ablate = commands.add_parser("ablate", help="run the ablation grid (paper §4.3) into ablation_results")
    _common(ablate)
    ablate.add_argument(
        "--questions", required=True, nargs="+", help="questions.jsonl files (one per benchmark)"
    )
    ablate.add_argument(
        "--settings",
        help="comma-separated settings (default: the paper's table, follow-up "
        "depths 0/1 and SABER raw/heuristic); see flows/evaluation/ablation.py",
    )
    ablate.add_argument("--system", default="nkw", choices=SYSTEMS, help="answering system (default nkw)")
    ablate.add_argument(
        "--limit", type=int, help="the fixed question budget: N questions of each file, in turn per document"
    )
    ablate.add_argument(
        "--samples", type=int, default=1, help="answers sampled per question (Pass@N; LLM only)"
    )
    ablate.add_argument(
        "--judge-url", help="OpenAI-compatible server of the correctness judge (default: --llm-url)"
    )
    ablate.add_argument("--judge-model", help="judge model name (default: --model)")
    ablate.add_argument(
        "--parallel", type=int, default=2, help="settings answered at the same time (default 2)"
    )
    ablate.add_argument("--fresh", action="store_true", help="answer and judge again; ignore stored work")
    ablate.add_argument("--no-prefect", action="store_true", help="run in-process without Prefect")
    _progress(ablate)
    _json(ablate, "the ablation table")
    ablate.set_defaults(command="ablate")

    report = commands.add_parser(
        "report", help="one self-contained HTML report of evaluation runs and ablations"
    )
    _workspace(report)
    report.add_argument("--run", action="append", help="an evaluation run id (repeat; default: every run)")
    report.add_argument("--ablation", help="ablation id (default: the largest ablation_results run)")
    _out(report, "report.html; a FILE.html is still accepted")
    _json(report, "what was written")
    _debug(report)
    report.set_defaults(command="report")

    sql = commands.add_parser("sql", help="read-only DuckDB SQL over the workspace tables")
    sql.add_argument("query", help="one read-only statement (SELECT, WITH, SHOW, DESCRIBE, SUMMARIZE)")
    _workspace(sql)
    sql.add_argument(
        "--format", choices=["table", "csv", "json"], default="table", help="output format (default table)"
    )
    sql.add_argument(
        "--json", action="store_const", dest="format", const="json", help="the rows as JSON (= --format json)"
    )
    sql.add_argument(
        "--max-rows", type=int, help="rows kept (default: 200 shown in table format, every row in csv/json)"
    )
    sql.add_argument(
        "--config", help="TOML settings file ([sql] timeout_s, memory_limit, threads, max_result_mb)"
    )
    _debug(sql)
    sql.set_defaults(command="sql")

    inspect = commands.add_parser("inspect", help="row counts, stage status and failures")
    _workspace(inspect)
    _json(inspect, "the counts, stages and failures")
    _debug(inspect)
    inspect.set_defaults(command="inspect")

    view = commands.add_parser("view", help="write a self-contained HTML view of one document's bundle")
    _workspace(view)
    view.add_argument("--doc", required=True, help="document id")
    _out(view, "DOC.html")
    _json(view, "the file written")
    _debug(view)
    view.set_defaults(command="view")

    export = commands.add_parser(
        "export",
        help="the entity, directed interaction and episode graphs as GraphML, GEXF or CSV, and the "
        "summaries as Markdown and CSV",
    )
    _workspace(export)
    export.add_argument("--doc", help="document id (default: every document of the workspace)")
    export.add_argument("--format", choices=["graphml", "gexf", "csv"], required=True, help="file format")
    _out(
        export,
        "DOC.entities.FORMAT, DOC.interactions.FORMAT and DOC.episodes.FORMAT, named after the workspace "
        "without --doc; a FILE.FORMAT stem is still accepted",
    )
    _json(export, "the files written")
    _debug(export)
    export.set_defaults(command="export")

    llm = commands.add_parser("llm", help="LLM server utilities")
    llm_commands = llm.add_subparsers(dest="llm_command", metavar="SUBCOMMAND")
    llm.set_defaults(command="llm", help_of=llm)
    check = llm_commands.add_parser(
        "check", help="list models, make one tiny structured request, print latency"
    )
    _common(check, workspace=False)
    _json(check, "the outcome")
    check.set_defaults(command="llm_check")
    _llm_local(llm_commands)
    return parser


def _llm_local(llm_commands: argparse._SubParsersAction) -> None:
    """Register `llm fetch` and `llm local` under `nkw llm`."""
    fetch = llm_commands.add_parser("fetch", help="download and verify a pinned GGUF model (cached)")
    local = llm_commands.add_parser(
        "local", help="serve a GGUF model with llama.cpp on 127.0.0.1 and print the --llm-url to use"
    )
    for parser in (fetch, local):
        parser.add_argument(
            "--model", dest="local_model", metavar="MODEL",
            help="pinned model 0.5b (default), 1.5b, smollm2-135m, or the path of any GGUF file",
        )  # fmt: skip
        parser.add_argument(
            "--cache-dir", help="model cache (default $NKW_MODEL_CACHE or ~/.cache/nkw/models)"
        )
        parser.add_argument("--config", help="TOML settings file ([local_llm] section)")
        parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
        parser.set_defaults(command="llm_local", serve=parser is local)
    fetch.add_argument("--json", action="store_true", help="print the model file, id and pin as JSON")
    local.add_argument("--json", action="store_true", help="print the --llm-url and --model to use as JSON")
    local.add_argument("--port", type=int, help="port on 127.0.0.1 (default: a free one)")
    local.add_argument("--context", type=int, help="tokens per slot, prompt and reply (default 16384)")
    local.add_argument("--parallel", type=int, help="slots: requests decoded at the same time (default 1)")
