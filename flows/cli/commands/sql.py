"""`nkw sql`: read-only DuckDB over the workspace's tables."""

from __future__ import annotations

import argparse

import duckdb

from flows.cli import output as cli_output
from flows.cli.commands.common import UserError, settings_from, workspace_from
from tasks.tables.warehouse import QueryLimits, QueryRefused, run_query


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    workspace = workspace_from(args)
    limits = QueryLimits(settings.sql.timeout_s, settings.sql.memory_limit, settings.sql.threads)
    try:
        table = run_query(workspace, args.query, limits=limits)
    except QueryRefused as exc:
        raise UserError(str(exc)) from None
    except duckdb.Error as exc:
        raise UserError(f"SQL error: {' '.join(str(exc).split())[:400]}") from None
    print(cli_output.format_table(table, args.format, args.max_rows))
    return 0
