"""DuckDB read layer: one view per table over the workspace's Parquet files.

Parquet stays the source of truth; DuckDB only reads, and read-only holds by construction:

- DuckDB opens no file at all. Each table is a pyarrow dataset over the partitions the
  writer recorded (`tasks.tables.ledger`), registered with the connection; the connection
  itself runs with `enable_external_access=false`, no allowed paths or directories and no
  temp directory, so `COPY`, `ATTACH`, `EXPORT`, `INSTALL/LOAD` and table functions such as
  `read_csv` have nowhere to read or write. External access is switched off after the
  connection opens, not in its start-up config: started that way DuckDB allow-lists the
  database "file" `<cwd>/:memory:` and its WAL names, and a symlink named `:memory:` in the
  current folder would then be readable.
- The configuration is locked (`lock_configuration`) after the limits are set: a memory
  limit, a thread count, and a time limit enforced by interrupting the query. The result is
  fetched in batches and refused once it passes `max_result_bytes` (or kept to `max_rows`),
  so a huge result never sits in memory whole.
- `nkw sql` accepts one statement, and only if DuckDB's own parser calls it a SELECT (or an
  EXPLAIN [ANALYZE] of a SELECT) — the allow-list is a second wall, not the first.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds

import schemas
from schemas.tables import TABLES
from tasks.tables import ledger
from tasks.tables.io import Workspace
from tasks.tables.partitions import partitions_table
from tasks.tables.printable import mark_json, printable

SQL_DIR = Path(schemas.__file__).resolve().parent / "sql"
ALLOWED_STATEMENTS = {"SELECT"}
MAX_TIMEOUT_S = 7 * 24 * 3600.0  # threading.Timer overflows near 2**31 s; nobody waits a week
FETCH_ROWS = 1024  # rows per fetched batch
EXPLAIN_KEYWORDS = {"explain", "analyze", "analyse"}


class QueryRefused(ValueError):
    """A statement that is not a read-only query, or one that went over its limits."""


@dataclass(frozen=True)
class QueryLimits:
    timeout_s: float = 30.0
    memory_limit: str = "1GB"
    threads: int = 2
    max_result_bytes: int = 128 * 1024 * 1024  # Arrow bytes of the fetched result


@dataclass
class QueryResult:
    table: pa.Table  # at most `max_rows` rows, column names made unique
    total_rows: int  # rows the query produced (counted, not kept, past `max_rows`)

    @property
    def truncated(self) -> bool:
        return self.total_rows > self.table.num_rows


def table_files(
    workspace: Workspace, verify: bool = True
) -> tuple[dict[str, list[Path]], ledger.Verification]:
    """The partitions each view reads: with `verify`, only files whose hash matches the ledger."""
    files: dict[str, list[Path]] = {}
    checked = ledger.Verification()
    for name in TABLES:
        if verify:
            result = ledger.verify(workspace.root, workspace.partition_files(name))
            checked.extend(result)
            files[name] = result.trusted
        else:
            files[name] = workspace.partitions(name)
    return files, checked


def connect(
    workspace: Workspace,
    limits: QueryLimits | None = None,
    verify: bool = True,
    files: dict[str, list[Path]] | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per workspace table and no file access at all."""
    limits = limits or QueryLimits()
    con = duckdb.connect(
        ":memory:",
        config={
            "autoinstall_known_extensions": False,
            "autoload_known_extensions": False,
            "temp_directory": "",
        },
    )
    try:
        # Here rather than in the config above, so that the allow-list stays empty (module docstring).
        con.execute("SET enable_external_access=false")
        # A query running over 2 s would draw DuckDB's progress bar into the printed result.
        con.execute("SET enable_progress_bar=false")
        con.execute(f"SET memory_limit='{_setting_text(limits.memory_limit)}'")
        con.execute(f"SET threads={int(limits.threads)}")
        con.execute("SET lock_configuration=true")
        files = files if files is not None else table_files(workspace, verify)[0]
        for name, table_spec in TABLES.items():
            data = (
                ds.dataset([str(p) for p in files.get(name, [])], schema=table_spec.schema, format="parquet")
                if files.get(name)
                else table_spec.schema.empty_table()
            )
            con.register(name, data)
        con.register("partitions", partitions_table(workspace, files))  # the files the views read
    except BaseException:
        con.close()
        raise
    return con


def _setting_text(value: str) -> str:
    if not value.replace(" ", "").replace(".", "").isalnum():
        raise ValueError(f"invalid memory limit {value!r} (e.g. '1GB')")
    return value


def check_readonly(sql: str) -> str:
    """The single statement in `sql` if DuckDB's parser calls it a query; QueryRefused otherwise."""
    statement = _one_statement(sql)
    kind = statement.type.name
    if kind == "EXPLAIN":
        # EXPLAIN ANALYZE executes what it explains: the explained statement must itself be a query.
        inner = _after_explain(statement.query)
        if inner is None or _one_statement(inner).type.name not in ALLOWED_STATEMENTS:
            raise QueryRefused("refused: only a SELECT may be explained; the workspace is read-only")
        return sql
    if kind not in ALLOWED_STATEMENTS:
        raise QueryRefused(
            f"refused: {kind} statements are not allowed; the workspace is read-only (use SELECT)"
        )
    return sql


def _one_statement(sql: str):
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"SQL syntax error: {' '.join(str(exc).split())}") from None
    if len(statements) != 1:
        raise QueryRefused(f"expected exactly one SQL statement, got {len(statements)}")
    return statements[0]


def _after_explain(sql: str) -> str | None:
    """The statement an EXPLAIN [ANALYZE] wraps, located with DuckDB's tokenizer."""
    tokens = duckdb.tokenize(sql)
    for index, (offset, _kind) in enumerate(tokens):
        end = tokens[index + 1][0] if index + 1 < len(tokens) else len(sql)
        if sql[offset:end].strip().lower() not in EXPLAIN_KEYWORDS:
            return sql[offset:]
    return None


def run_query(
    workspace: Workspace, sql: str, params: list[Any] | None = None, limits: QueryLimits | None = None
) -> pa.Table:
    """Run one read-only query over the workspace views, within its limits, and return Arrow rows."""
    return fetch_query(workspace, sql, params, limits).table


def fetch_query(
    workspace: Workspace,
    sql: str,
    params: list[Any] | None = None,
    limits: QueryLimits | None = None,
    max_rows: int | None = None,
    as_printed: bool = False,
) -> QueryResult:
    """Run one read-only query within its limits; keep at most `max_rows` rows (all when None) and
    refuse a kept result over `limits.max_result_bytes`. With `as_printed`, values Python cannot
    hold come back as DuckDB's text (`tasks.tables.printable`)."""
    check_readonly(sql)
    limits = limits or QueryLimits()
    con = connect(workspace, limits)
    expired = threading.Event()

    def stop() -> None:
        expired.set()
        con.interrupt()

    timer = threading.Timer(min(max(limits.timeout_s, 0.0), MAX_TIMEOUT_S), stop)
    timer.daemon = True
    timer.start()
    try:
        relation = con.sql(sql, params=params or None)
        json_columns: set[int] = set()
        if as_printed and relation is not None:
            relation, json_columns = printable(relation)
        result = _bounded(relation.to_arrow_reader(FETCH_ROWS), max_rows, limits.max_result_bytes)
        result.table = mark_json(result.table, json_columns)
        return result
    except (duckdb.Error, OSError, MemoryError) as exc:
        # While batches stream, Arrow re-raises DuckDB's interrupt and allocation failures as OSError.
        if expired.is_set():
            raise QueryRefused(
                f"query stopped after the time limit of {limits.timeout_s:g} s (sql.timeout_s)"
            ) from None
        # "out of memory", not "memory": a refused read_text(':memory:') names the word too.
        if isinstance(exc, (duckdb.OutOfMemoryException, MemoryError)) or "out of memory" in str(exc).lower():
            raise QueryRefused(
                f"query stopped at the memory limit of {limits.memory_limit} (sql.memory_limit)"
            ) from None
        raise
    finally:
        timer.cancel()
        con.close()


def _bounded(reader: pa.RecordBatchReader, max_rows: int | None, max_bytes: int) -> QueryResult:
    """The first `max_rows` rows of `reader` (counting the rest without keeping them)."""
    kept: list[pa.RecordBatch] = []
    kept_rows = kept_bytes = total = 0
    for batch in reader:
        total += batch.num_rows
        room = batch.num_rows if max_rows is None else max(0, max_rows - kept_rows)
        if room == 0:
            continue
        part = batch.slice(0, room) if room < batch.num_rows else batch
        kept_bytes += part.nbytes
        if kept_bytes > max_bytes:
            raise QueryRefused(
                f"result larger than {max_bytes / 2**20:g} MB (sql.max_result_mb): "
                "add a LIMIT, select fewer columns or aggregate"
            )
        kept.append(part)
        kept_rows += part.num_rows
    schema = reader.schema
    table = pa.Table.from_batches(kept, schema=schema)
    return QueryResult(table.rename_columns(unique_names(schema.names)), total)


def unique_names(names: list[str]) -> list[str]:
    """Column names with repeats renamed `a_2`, `a_3`, ... (skipping names already taken), so that no
    output format silently merges two columns."""
    taken = set(names)
    seen: set[str] = set()
    result = []
    for name in names:
        if name not in seen:
            seen.add(name)
            result.append(name)
            continue
        n = 2
        while f"{name}_{n}" in taken:
            n += 1
        taken.add(f"{name}_{n}")
        result.append(f"{name}_{n}")
    return result


def load_sql(name: str) -> str:
    """A named query from schemas/sql/<name>.sql."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")
