"""`nkw sql` is read-only by construction: every write, file access and configuration change
is refused, and no file in the workspace (or the current folder) changes."""

from __future__ import annotations

import json

import duckdb
import pytest

from flows.cli.main import main
from tasks.tables.warehouse import QueryRefused, check_readonly, connect
from tests.security.conftest import snapshot

DOC = "the_lighthouse_key"


def attacks(ws: str) -> list[str]:
    chunk_file = f"{ws}/tables/chunks/{DOC}.parquet"
    rewrite = f"SELECT * REPLACE ('ATTACKER TEXT' AS text) FROM chunks WHERE doc_id='{DOC}'"
    return [
        # The reported attack and its relatives.
        f"EXPLAIN ANALYZE COPY ({rewrite}) TO '{chunk_file}' (FORMAT parquet)",
        f"COPY ({rewrite}) TO '{chunk_file}' (FORMAT parquet)",
        f"COPY ({rewrite}) TO '{ws}/tables/chunks/extra.parquet' (FORMAT parquet)",
        f"EXPLAIN ANALYZE COPY ({rewrite}) TO '{ws}/tables/documents/evil.parquet' (FORMAT parquet)",
        "EXPLAIN ANALYZE CREATE TABLE t AS SELECT 1",
        "EXPLAIN ANALYSE INSERT INTO chunks SELECT * FROM chunks",
        "EXPLAIN ANALYZE DROP VIEW chunks",
        "DROP VIEW chunks",
        "DROP TABLE chunks",
        "CREATE TABLE t AS SELECT 1",
        "CREATE VIEW v AS SELECT 1",
        "INSERT INTO chunks SELECT * FROM chunks",
        "DELETE FROM chunks",
        "UPDATE chunks SET text = 'x'",
        "ALTER VIEW chunks RENAME TO c",
        # Configuration.
        "PRAGMA threads=1",
        "PRAGMA enable_profiling",
        "SET enable_external_access=true",
        "SET threads=64",
        "SET memory_limit='100GB'",
        "RESET lock_configuration",
        "SET allowed_directories=['/']",
        # Other databases, extensions, export.
        f"ATTACH '{ws}/evil.db'",
        f"ATTACH '{ws}/evil.db' AS e; CREATE TABLE e.t AS SELECT 1",
        "DETACH memory",
        "INSTALL httpfs",
        "LOAD httpfs",
        "INSTALL 'ext' FROM 'http://example.invalid'",
        f"EXPORT DATABASE '{ws}/export'",
        f"IMPORT DATABASE '{ws}'",
        f"COPY chunks FROM '{chunk_file}'",
        "CHECKPOINT",
        "VACUUM",
        "CALL pragma_version()",
        "CALL checkpoint()",
        # Several statements at once.
        "SELECT 1; DROP VIEW chunks",
        f"SELECT 1; COPY chunks TO '{ws}/x.csv'",
        "SELECT 1;;SELECT 2",
    ]


def reads_elsewhere(ws: str) -> list[str]:
    """Table functions over paths that are not the workspace views."""
    return [
        "SELECT * FROM read_csv('.tmp/x.csv')",
        "SELECT * FROM read_csv_auto('.tmp/x.csv')",
        "SELECT * FROM read_csv('etc/passwd')",
        "SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM read_text('/etc/hostname')",
        "SELECT * FROM read_blob('/etc/passwd')",
        "SELECT * FROM glob('/etc/*')",
        "SELECT * FROM glob('.tmp/*')",
        "SELECT * FROM read_json('/etc/passwd')",
        f"SELECT * FROM read_parquet('{ws}/tables/chunks/*.parquet')",
        f"SELECT * FROM '{ws}/tables/chunks/{DOC}.parquet'",
        f"SELECT * FROM read_text('{ws}/manifest/{DOC}.json')",
        "SELECT * FROM read_csv('http://example.invalid/x.csv')",
        "EXPLAIN ANALYZE SELECT * FROM read_csv('/etc/passwd')",
        "SELECT * FROM duckdb_extensions() WHERE loaded AND "
        "extension_name = 'httpfs' UNION ALL SELECT * FROM read_csv('/etc/passwd')",
    ]


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


@pytest.mark.parametrize("index", range(len(attacks("W"))))
def test_every_write_and_configuration_change_is_refused(index, built_workspace, trap_folder, capsys):
    ws = str(built_workspace.root)
    sql = attacks(ws)[index]
    before = snapshot(built_workspace.root, trap_folder)
    rc, out, err = _run(["sql", sql, "-w", ws], capsys)
    assert rc != 0 and err.startswith("error: ") and "Traceback" not in err, (sql, rc, out, err)
    assert len(err.strip().splitlines()) == 1
    assert snapshot(built_workspace.root, trap_folder) == before, sql


@pytest.mark.parametrize("index", range(len(reads_elsewhere("W"))))
def test_no_path_outside_the_views_is_readable(index, built_workspace, trap_folder, capsys):
    ws = str(built_workspace.root)
    sql = reads_elsewhere(ws)[index]
    before = snapshot(built_workspace.root, trap_folder)
    rc, out, err = _run(["sql", sql, "-w", ws], capsys)
    assert rc != 0 and "secret" not in out and "root:" not in out, (sql, out)
    assert "disabled by configuration" in err or "refused" in err or "error" in err
    assert snapshot(built_workspace.root, trap_folder) == before


@pytest.mark.parametrize(
    "sql",
    [
        "COPY (SELECT 1) TO 'out.csv'",
        "EXPORT DATABASE 'exported'",
        "ATTACH 'other.db'",
        "INSTALL json",
        "SELECT * FROM read_csv('.tmp/x.csv')",
        "SET enable_external_access=true",
        "SET temp_directory='.tmp'",
    ],
)
def test_the_connection_itself_cannot_touch_files(sql, built_workspace, trap_folder):
    """Read-only by construction: even without the statement allow-list, the connection refuses."""
    before = snapshot(built_workspace.root, trap_folder)
    con = connect(built_workspace)
    try:
        with pytest.raises(duckdb.Error):
            con.execute(sql)
        assert con.execute("SELECT current_setting('temp_directory')").fetchone()[0] == ""
    finally:
        con.close()
    assert snapshot(built_workspace.root, trap_folder) == before


def test_the_allow_list_uses_duckdbs_parser():
    for sql in [
        "SELECT 1",
        "  select 1",
        "WITH a AS (SELECT 1) SELECT * FROM a",
        "FROM chunks",
        "EXPLAIN SELECT 1",
        "EXPLAIN ANALYZE SELECT 1",
        "/* comment */ SELECT 1",
        "VALUES (1)",
    ]:
        assert check_readonly(sql) == sql
    for sql in [
        "EXPLAIN ANALYZE COPY (SELECT 1) TO 'x'",
        "EXPLAIN CREATE TABLE t AS SELECT 1",
        "/* SELECT */ DROP VIEW chunks",
        "SELECT 1; SELECT 2",
        "",
        "EXPLAIN ANALYZE",
    ]:
        with pytest.raises(QueryRefused):
            check_readonly(sql)


def test_reading_still_works_and_prints_every_type(built_workspace, capsys):
    ws = str(built_workspace.root)
    sql = (
        "SELECT count(*) AS n, 'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, DATE '2020-01-01' AS d, "
        "[DATE '2020-01-01'] AS ds, 1.25::DECIMAL(5,2) AS m, [1.25::DECIMAL(5,2)] AS ms, "
        "TIMESTAMP '2020-01-01 10:00' AS ts, {'a': [DATE '2021-02-03']} AS st FROM chunks"
    )
    rc, out, _ = _run(["sql", sql, "-w", ws, "--format", "json"], capsys)
    assert rc == 0
    row = json.loads(out)[0]  # strict: Python's json accepts NaN, so also check the text
    assert "NaN" not in out and "Infinity" not in out
    assert row["n"] > 0 and row["nan"] is None and row["inf"] is None and row["ds"] == ["2020-01-01"]
    assert row["m"] == "1.25" and row["ms"] == ["1.25"] and row["st"] == {"a": ["2021-02-03"]}
    for fmt in ("table", "csv"):
        rc, out, err = _run(["sql", sql, "-w", ws, "--format", fmt], capsys)
        assert rc == 0 and "2020-01-01" in out and "1.25" in out, (fmt, err)


def test_queries_have_a_time_limit(built_workspace, tmp_path, capsys):
    config = tmp_path / "limits.toml"
    config.write_text("[sql]\ntimeout_s = 0.5\n")
    sql = "SELECT count(*) FROM range(100000000) a, range(100000) b WHERE a.range + b.range = -1"
    rc, _, err = _run(["sql", sql, "-w", str(built_workspace.root), "--config", str(config)], capsys)
    assert rc != 0 and "time limit of 0.5 s" in err


def test_queries_have_a_memory_limit(built_workspace, tmp_path, capsys):
    config = tmp_path / "limits.toml"
    config.write_text("[sql]\nmemory_limit = '64MB'\n")
    sql = "SELECT list(range) FROM range(50000000)"
    rc, _, err = _run(["sql", sql, "-w", str(built_workspace.root), "--config", str(config)], capsys)
    assert rc != 0 and "memory limit of 64MB" in err, err
