"""`nkw build`: bring a workspace up to date with its inputs (Prefect, threads or Dask)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import replace

from flows.build.corpus import build, make_resources
from flows.build.dry_run import dry_run, format_dry_run
from flows.build.retry import paths_to_retry
from flows.build_corpus import build_with_prefect
from flows.cli import output as cli_output
from flows.cli.commands.common import (
    EXIT_FAILED,
    UserError,
    llm_client,
    path_problem,
    prefect_environment,
    settings_from,
    workspace_from,
)
from flows.stages import STAGES_BY_NAME, select_stages
from tasks.llm.client.preflight import LLMUnavailable
from tasks.tables.lock import UnsafeWorkspace, WorkspaceLocked
from tasks.terminal import say


def run(args: argparse.Namespace) -> int:
    if args.runner == "thread" and args.dask_address:
        raise UserError("--dask-address needs --runner dask")
    if args.runner != "thread" and args.no_prefect:
        raise UserError(f"--runner {args.runner} runs under Prefect; drop --no-prefect")
    price = args.price_per_million
    if price is not None and not (math.isfinite(price) and price >= 0):  # else the cost prints as nan
        raise UserError(f"--price-per-million must be a finite price of 0 or more (got {price})")

    settings = settings_from(args)
    workspace = workspace_from(args, must_exist=bool(args.retry_failed and not args.paths))
    try:
        stages = select_stages(args.stages.split(",") if args.stages else None, args.until)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    force = frozenset(name.strip() for name in (args.force or "").split(",") if name.strip())
    unknown = sorted(force - set(STAGES_BY_NAME))
    if unknown:
        raise UserError(
            f"unknown stage(s) for --force: {', '.join(unknown)}; stages: {', '.join(STAGES_BY_NAME)}"
        )
    paths = list(args.paths)
    if not paths and args.retry_failed:
        paths = paths_to_retry(workspace)
        if not paths:
            say(f"workspace {workspace.root}: nothing to retry (no stage is partial or failed)")
            return 0
    elif not paths:
        raise UserError(
            "give at least one PATH to build (or --retry-failed to retry a workspace's failed items)"
        )
    problems = [p for p in map(path_problem, paths) if p]
    if problems and len(problems) == len(paths):
        raise UserError("; ".join(problems))
    if args.dry_run:
        existing = workspace if workspace.tables_dir.is_dir() else None  # a previous build's counts, if any
        estimate = dry_run(paths, stages, settings, existing, args.price_per_million)
        print(json.dumps(estimate, indent=1) if args.json else format_dry_run(estimate))
        return 0
    prefect_environment(args.verbose)
    llm = llm_client(settings, workspace)
    try:
        resources = replace(make_resources(settings, llm=llm), force=force)
        options = dict(
            stages=stages,
            resources=resources,
            quiet=args.quiet or args.json,
            prune=args.prune,
            allow_offline_fallback=args.allow_offline_fallback,
        )
        if args.no_prefect:
            report = build(paths, workspace, settings, **options)
        else:  # documents as Prefect task runs, and the build's artifact on their flow run
            report = build_with_prefect(
                paths, workspace, settings, runner=args.runner, dask_address=args.dask_address, **options
            )
    except UnsafeWorkspace as exc:  # a planted link or a file in a folder's place: bad input, refused
        raise UserError(str(exc)) from None
    except (LLMUnavailable, WorkspaceLocked) as exc:  # not a usage mistake: it can succeed later
        say(f"error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    finally:
        if llm is not None:
            llm.close()
    if args.json:
        print(json.dumps(cli_output.build_json(report), indent=1))
    else:
        say(cli_output.build_text(report, workspace))
    return 0 if report.ok else EXIT_FAILED
