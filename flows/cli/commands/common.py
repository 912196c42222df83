"""What every command shares: one-line user errors, settings and workspace from the arguments,
the injected LLM client, and a quiet local Prefect."""

from __future__ import annotations

import argparse
import errno
import os
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from flows.cli.errors import EXIT_FAILED, EXIT_USAGE, UserError
from schemas.config import load_settings
from tasks.files import is_regular, kind
from tasks.llm.client.factory import build_llm_client
from tasks.tables.io import Workspace

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "UserError"]  # declared in flows.cli.errors, used from here too

# Services of Prefect's server with no work on a build's temporary server.
IDLE_SERVICES = (
    "SCHEDULER",
    "LATE_RUNS",
    "FOREMAN",
    "PAUSE_EXPIRATIONS",
    "CANCELLATION_CLEANUP",
    "REPOSSESSOR",
    "CLEANUP_RECONCILER",
    "TRIGGERS",
)


def prefect_environment(verbose: bool = False) -> None:
    # Quiet, local Prefect unless the user configured their own (e.g. a server URL).
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    os.environ.setdefault("PREFECT_UI_ENABLED", "false")
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    # The temporary server persists events in batches of 100 instead of 20: it shares the machine
    # with the build, and nothing reads its event feed while the build runs. (Task runs stay one
    # write each: a batched task-run recorder still holding events when the server stops logs
    # them as an error with a traceback.)
    os.environ.setdefault("PREFECT_SERVER_SERVICES_EVENT_PERSISTER_BATCH_SIZE", "100")
    # Nor does it run the services that act on schedules, deployments, work pools, automations or
    # stuck runs: a temporary server has none of them (with them, its start-up took 3.8-4.5 s of
    # CPU instead of 3.7-3.9 s, and idling 0.4-0.6 s per 20 s instead of 0.3-0.4 s). A configured
    # server is the user's own: these variables only reach a server this process starts.
    for service in IDLE_SERVICES:
        os.environ.setdefault(f"PREFECT_SERVER_SERVICES_{service}_ENABLED", "false")
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "INFO" if verbose else "WARNING")
    os.environ.setdefault("PREFECT_HOME", str(Path.home() / ".nkw" / "prefect"))
    # The temporary server keeps its SQLite database here; SQLite cannot create the folder itself.
    Path(os.environ["PREFECT_HOME"]).expanduser().mkdir(parents=True, exist_ok=True)


def settings_from(args: argparse.Namespace):
    """Typed settings: the config file (if any) with the command-line overrides on top."""
    config = Path(args.config) if getattr(args, "config", None) else None
    problem = file_problem(config, "config file") if config is not None else None
    if problem:
        raise UserError(problem)
    overrides: dict[str, dict[str, Any]] = {
        "build": {"concurrency": getattr(args, "concurrency", None)},
        "embed_texts": {
            "backend": getattr(args, "embeddings", None),
            "url": getattr(args, "embeddings_url", None),
            "model": getattr(args, "embeddings_model", None),
        },
        "llm": {
            **llm_urls(getattr(args, "llm_url", None)),
            "model": getattr(args, "model", None),
            "grammar": getattr(args, "llm_grammar", None),  # set by --local-llm, never by a flag
        },
        "answer": {
            "follow_up_rounds": getattr(args, "follow_up_rounds", None),
            "graph_tools": False if getattr(args, "no_graph_tools", False) else None,
            "reading_skills": False if getattr(args, "no_reading_skills", False) else None,
            "hierarchy": False if getattr(args, "no_hierarchy", False) else None,
            "attributes": False if getattr(args, "no_attributes", False) else None,
        },
        "evaluate": {
            "judge_url": getattr(args, "judge_url", None),
            "judge_model": getattr(args, "judge_model", None),
        },
    }
    try:
        return load_settings(config, overrides)
    except ValidationError as exc:  # each error as "section.key: reason", without pydantic's links
        reasons = "; ".join(
            f"{'.'.join(str(part) for part in error['loc'])}: {error['msg'].removeprefix('Value error, ')}"
            for error in exc.errors()[:3]
        )
        raise UserError(f"invalid configuration: {' '.join(reasons.split())[:300]}") from None
    except Exception as exc:  # tomllib errors
        raise UserError(f"invalid configuration: {' '.join(str(exc).split())[:300]}") from None


def llm_urls(given: str | list[str] | None) -> dict[str, Any]:
    """`[llm] url` (and `endpoints`) from --llm-url, given once or more (or set by --local-llm)."""
    urls = [given] if isinstance(given, str) else list(given or [])
    if not urls:
        return {"url": None}
    return {"url": urls[0], **({"endpoints": [{"url": url} for url in urls[1:]]} if urls[1:] else {})}


def workspace_from(args: argparse.Namespace, must_exist: bool = True) -> Workspace:
    """The workspace named by --workspace; a UserError when it must exist and does not, or when the
    path (or a folder above it) is a file."""
    problem = not_a_folder(args.workspace)
    if problem:
        raise UserError(problem)
    workspace = Workspace.at(args.workspace)
    if must_exist and not workspace.exists():
        raise UserError(
            f"no workspace at {args.workspace} (build one with `nkw build PATH --workspace {args.workspace}`)"
        )
    return workspace


def not_a_folder(path: str) -> str | None:
    """Why `path` can never be a workspace folder: it, or the nearest part of it that exists, is a
    file (a build would fail deep inside with NotADirectoryError); None otherwise."""
    given = Path(path).expanduser()
    for part in (given, *given.parents):
        if part.is_dir():
            return None
        if os.path.lexists(part):
            where = "" if part == given else f" ({part} is not a folder)"
            return f"workspace {path} is not a folder{where}"
    return None


def api_key() -> str | None:
    """The API key of the LLM server, from the environment only (never a file or an argument)."""
    return os.environ.get("NKW_API_KEY") or os.environ.get("OPENAI_API_KEY") or None


def llm_client(settings, workspace):
    """The injected LLM client when --llm-url (or [llm].url) is set; None selects the embedded default."""
    return build_llm_client(settings.llm, api_key(), workspace.cache_dir / "llm")


def file_problem(path: str | os.PathLike[str], what: str) -> str | None:
    """Why `path` cannot be read as `what` ("questions file"), naming the real cause, or None."""
    if is_regular(path):
        return None
    problem = path_problem(str(path))
    if problem is None:
        return f"{what} {path} is {kind(os.stat(path).st_mode)}, not a regular file"
    return problem.replace("no such file or folder", f"{what} not found")


def path_problem(path: str) -> str | None:
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
