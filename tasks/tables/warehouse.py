"""DuckDB read layer: one view per table over the workspace's Parquet files.

Parquet stays the source of truth; DuckDB only reads. `open_readonly` is the connection
behind `nkw sql`: file access is confined to the workspace's tables and only query
statements are accepted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

import schemas
from schemas.tables import TABLES
from tasks.tables.io import Workspace

SQL_DIR = Path(schemas.__file__).resolve().parent / "sql"
ALLOWED_STATEMENTS = {"SELECT", "EXPLAIN"}


class QueryRefused(ValueError):
    """A statement that is not a read-only query."""


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def create_views(con: duckdb.DuckDBPyConnection, workspace: Workspace) -> list[str]:
    """A view per declared table; tables with no files yet get an empty, typed view."""
    created = []
    for name, table_spec in TABLES.items():
        files = workspace.partitions(name)
        if files:
            listing = ", ".join(_sql_literal(str(p)) for p in files)
            con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM read_parquet([{listing}])')
        else:
            con.register(f"__empty_{name}", table_spec.schema.empty_table())
            con.execute(f'CREATE OR REPLACE VIEW "{name}" AS SELECT * FROM "__empty_{name}"')
        created.append(name)
    return created


def connect(workspace: Workspace) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view per workspace table."""
    con = duckdb.connect(":memory:")
    create_views(con, workspace)
    return con


def open_readonly(workspace: Workspace) -> duckdb.DuckDBPyConnection:
    """Like `connect`, then locked: no file access outside the workspace tables, no config changes."""
    con = connect(workspace)
    con.execute(f"SET allowed_directories=[{_sql_literal(str(workspace.tables_dir) + '/')}]")
    con.execute("SET enable_external_access=false")
    con.execute("SET lock_configuration=true")
    return con


def check_readonly(sql: str) -> str:
    """The single statement in `sql` if it is a query; QueryRefused (one clear line) otherwise."""
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryRefused(f"SQL syntax error: {' '.join(str(exc).split())}") from None
    if len(statements) != 1:
        raise QueryRefused(f"expected exactly one SQL statement, got {len(statements)}")
    kind = statements[0].type.name
    if kind not in ALLOWED_STATEMENTS:
        raise QueryRefused(f"refused: {kind} statements are not allowed; the workspace is read-only (use SELECT)")
    return sql


def run_query(workspace: Workspace, sql: str, params: list[Any] | None = None) -> pa.Table:
    """Run one read-only query over the workspace views and return Arrow rows."""
    check_readonly(sql)
    con = open_readonly(workspace)
    try:
        return con.sql(sql, params=params or None).to_arrow_table()
    finally:
        con.close()


def load_sql(name: str) -> str:
    """A named query from schemas/sql/<name>.sql."""
    return (SQL_DIR / f"{name}.sql").read_text(encoding="utf-8")
