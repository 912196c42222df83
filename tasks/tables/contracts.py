"""Contract checks on a table partition before it is committed: unique keys, not-null,
accepted values, foreign keys into the same document's tables, and SQL invariants.
Checked in DuckDB over the Arrow rows about to be written."""

from __future__ import annotations

import atexit
import threading
from typing import Callable

import duckdb
import pyarrow as pa

from schemas.tables import TableSpec, spec
from tasks.tables.io import Workspace, read_table


class ContractError(ValueError):
    """A stage produced rows that break a table contract."""


_database: duckdb.DuckDBPyConnection | None = None
_database_lock = threading.Lock()


def _connection() -> duckdb.DuckDBPyConnection:
    """A fresh connection (its own registered views) to one in-memory database per process: a
    cursor costs microseconds where `duckdb.connect()` cost ~40 ms, once per checked table."""
    global _database
    with _database_lock:
        if _database is None:
            _database = duckdb.connect()
        return _database.cursor()


@atexit.register
def _close_database() -> None:  # left open, DuckDB's bindings print a leak report at exit
    global _database
    with _database_lock:
        if _database is not None:
            _database.close()
            _database = None


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def check_contracts(name: str, rows: pa.Table, resolve: Callable[[str], pa.Table | None]) -> list[str]:
    """Violations (one line each) of table `name`'s contracts by `rows`.

    `resolve(table)` returns the referenced table's rows for the same document (or None when
    it does not exist yet); foreign keys into a missing table are reported.
    """
    table_spec: TableSpec = spec(name)
    if rows.num_rows == 0:  # every check (invariants included) is over the rows: none can fail
        return []
    con = _connection()
    try:
        con.register("t", rows)
        problems: list[str] = []
        if table_spec.key:
            keys = ", ".join(_quote(k) for k in table_spec.key)
            duplicates = con.execute(
                f"SELECT count(*) FROM (SELECT {keys} FROM t GROUP BY {keys} HAVING count(*) > 1)"
            ).fetchall()[0][0]
            if duplicates:
                problems.append(f"{name}: {duplicates} duplicate key(s) on ({', '.join(table_spec.key)})")
        if table_spec.not_null:
            # Every not-null column counted in one scan (one query per column cost ~1 s per build).
            counts = ", ".join(f"count(*) FILTER (WHERE {_quote(c)} IS NULL)" for c in table_spec.not_null)
            found = con.execute(f"SELECT {counts} FROM t").fetchall()[0]
            for column, nulls in zip(table_spec.not_null, found):
                if nulls:
                    problems.append(f"{name}: {nulls} null value(s) in {column}")
        for column, accepted in table_spec.accepted_values.items():
            placeholders = ", ".join("?" for _ in accepted)
            bad = con.execute(
                f"SELECT DISTINCT {_quote(column)} FROM t WHERE {_quote(column)} IS NOT NULL "
                f"AND {_quote(column)} NOT IN ({placeholders}) LIMIT 5",
                list(accepted),
            ).fetchall()
            if bad:
                problems.append(
                    f"{name}: {column} has values outside {list(accepted)}: {[b[0] for b in bad]}"
                )
        for fk in table_spec.foreign_keys:
            problems.extend(_check_foreign_key(con, name, fk, rows, resolve))
        for label, query in table_spec.invariants:
            offending = con.execute(f"SELECT count(*) FROM ({query.format(t='t')})").fetchall()[0][0]
            if offending:
                problems.append(f"{name}: invariant '{label}' fails for {offending} row(s)")
        return problems
    finally:
        con.close()


def _check_foreign_key(
    con: duckdb.DuckDBPyConnection, name: str, fk, rows: pa.Table, resolve: Callable[[str], pa.Table | None]
) -> list[str]:
    if rows.num_rows == 0:
        return []
    referenced = resolve(fk.ref_table)
    if referenced is None:
        return [f"{name}: {fk.column} references {fk.ref_table}, which has not been built"]
    con.register("ref", referenced.select([fk.ref_column]))
    column = _quote(fk.column)
    values = f"(SELECT unnest({column}) AS v FROM t)" if fk.is_list else f"(SELECT {column} AS v FROM t)"
    missing = con.execute(
        f"SELECT count(*), any_value(v) FROM {values} WHERE v IS NOT NULL "
        f"AND v NOT IN (SELECT {_quote(fk.ref_column)} FROM ref)"
    ).fetchall()[0]
    problems = []
    if missing[0]:
        problems.append(
            f"{name}: {missing[0]} value(s) of {fk.column} not found in {fk.ref_table}.{fk.ref_column} "
            f"(e.g. {missing[1]!r})"
        )
    if not fk.nullable and not fk.is_list:
        nulls = con.execute(f"SELECT count(*) FROM t WHERE {column} IS NULL").fetchall()[0][0]
        if nulls:
            problems.append(f"{name}: {nulls} row(s) with no {fk.column}")
    con.unregister("ref")
    return problems


def check_outputs(workspace: Workspace, doc_id: str, outputs: dict[str, pa.Table]) -> list[str]:
    """Violations of every output partition's contracts, foreign keys resolved against the other
    outputs or, failing that, the document's committed partition (each read once, only the
    referenced columns)."""
    wanted: dict[str, set[str]] = {}
    for name in outputs:
        for fk in spec(name).foreign_keys:
            wanted.setdefault(fk.ref_table, set()).add(fk.ref_column)
    committed: dict[str, pa.Table | None] = {}

    def resolve(table: str) -> pa.Table | None:
        if table in outputs:
            return outputs[table]
        if table not in committed:
            columns = sorted(wanted.get(table, ())) or None
            committed[table] = (
                read_table(workspace, table, doc_id, columns=columns)
                if workspace.partitions(table, doc_id)
                else None
            )
        return committed[table]

    return [p for name, rows in outputs.items() for p in check_contracts(name, rows, resolve)]
