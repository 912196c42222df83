"""`nkw sql`: read-only DuckDB over the workspace's tables."""

from __future__ import annotations

import argparse
import os
import sys

import duckdb

from flows.cli import output as cli_output
from flows.cli.commands.common import EXIT_USAGE, UserError, settings_from, workspace_from
from flows.cli.interrupts import is_interrupt
from flows.cli.memory_cap import capped_memory, memory_bytes
from tasks.tables.warehouse import QueryLimits, QueryRefused, fetch_query

TABLE_ROWS = 200  # rows shown in table format unless --max-rows says otherwise


def run(args: argparse.Namespace) -> int:
    settings = settings_from(args)
    workspace = workspace_from(args)
    if args.max_rows is not None and args.max_rows < 1:
        raise UserError("--max-rows must be at least 1")
    result_bytes = settings.sql.max_result_mb * 2**20
    limits = QueryLimits(
        settings.sql.timeout_s, settings.sql.memory_limit, settings.sql.threads, max_result_bytes=result_bytes
    )
    # DuckDB's memory_limit covers its buffer manager, not every allocation (a 2048-row vector of
    # long strings is allocated outside it), and the fetched result and its formatting live in
    # Python: the process as a whole gets a ceiling too, released when the command returns.
    ceiling = memory_bytes(settings.sql.memory_limit) + 2 * result_bytes + 384 * 2**20
    max_rows = args.max_rows
    if max_rows is None and args.format == "table":
        max_rows = TABLE_ROWS
    try:
        with capped_memory(ceiling, on_exceeded=lambda: _stop_out_of_memory(settings.sql.memory_limit)):
            result = fetch_query(workspace, args.query, limits=limits, max_rows=max_rows, as_printed=True)
            text = cli_output.format_table(result.table, args.format, result.table.num_rows)
    except QueryRefused as exc:
        raise UserError(str(exc)) from None
    except MemoryError:
        raise UserError(
            f"query stopped: out of memory (limit {settings.sql.memory_limit}, sql.memory_limit)"
        ) from None
    except duckdb.Error as exc:
        if is_interrupt(exc):  # a Ctrl-C inside a scan arrives as DuckDB's error quoting it
            raise KeyboardInterrupt from None
        raise UserError(f"SQL error: {' '.join(str(exc).split())[:400]}") from None
    if args.format == "table":
        print(_with_total(text, result.table.num_rows, result.total_rows))
        return 0
    print(text)
    if result.truncated:  # a CSV/JSON export that is not the whole result must not look complete
        print(
            f"error: result cut to the first {result.table.num_rows} of {result.total_rows} rows"
            " (--max-rows)",
            file=sys.stderr,
        )
        return 1
    return 0


def _stop_out_of_memory(memory_limit: str) -> None:
    """Called from the memory watch's thread: the query cannot be interrupted inside an allocation,
    so the command ends here, with the same line as a MemoryError and nothing printed on stdout."""
    print(f"error: query stopped: out of memory (limit {memory_limit}, sql.memory_limit)", file=sys.stderr)
    sys.stderr.flush()
    os._exit(EXIT_USAGE)


def _with_total(text: str, shown: int, total: int) -> str:
    """The table's last line counts every row the query produced, not only those shown."""
    if total == shown:
        return text
    body = text.rsplit("\n", 1)[0]
    return f"{body}\n({total} rows) (showing {shown}; raise --max-rows or use --format csv/json)"
