"""Attacks on `nkw sql` beyond the read-only wall: names the sandbox might still resolve, results
that grow without bound, settings that break the timer, and outputs that drop columns. Each
ends with one line and the right exit status, and never changes a file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest

from flows.cli.main import main
from tasks.tables.warehouse import QueryLimits, connect, fetch_query, unique_names
from tests.conftest import REPO
from tests.security.conftest import snapshot

SECRET = "top secret from outside the workspace"


def _run(args: list[str], capsys) -> tuple[int, str, str]:
    rc = main(args)
    captured = capsys.readouterr()
    return rc, captured.out, captured.err


def _one_line_error(rc: int, err: str) -> bool:
    return (
        rc != 0
        and err.startswith("error: ")
        and len(err.strip().splitlines()) == 1
        and "Traceback" not in err
    )


@pytest.fixture()
def memory_trap(trap_folder, tmp_path):
    """`:memory:` and its WAL names in the current folder, each a symlink to a secret file."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    for name in (":memory:", ":memory:.wal", ":memory:.wal.recovery", ":memory:.wal.checkpoint"):
        (trap_folder / name).symlink_to(secret)
    return trap_folder


@pytest.mark.parametrize(
    "name", [":memory:", ":memory:.wal", ":memory:.wal.recovery", ":memory:.wal.checkpoint", "./:memory:"]
)
def test_the_database_name_in_the_current_folder_is_not_readable(name, built_workspace, memory_trap, capsys):
    ws = str(built_workspace.root)
    before = snapshot(built_workspace.root, memory_trap)
    for sql in (f"SELECT content FROM read_text('{name}')", f"SELECT * FROM read_csv('{name}')"):
        rc, out, err = _run(["sql", sql, "-w", ws], capsys)
        assert SECRET not in out and SECRET not in err, sql
        assert _one_line_error(rc, err), (sql, err)
    assert snapshot(built_workspace.root, memory_trap) == before


def test_the_connection_allows_no_path_at_all(built_workspace, memory_trap):
    con = connect(built_workspace)
    try:
        assert con.execute("SELECT current_setting('allowed_paths')").fetchone()[0] == []
        assert con.execute("SELECT current_setting('allowed_directories')").fetchone()[0] == []
        assert con.execute("SELECT current_setting('enable_external_access')").fetchone()[0] is False
    finally:
        con.close()


@pytest.mark.parametrize("fmt", ["table", "csv", "json"])
def test_repeated_column_names_stay_distinct_in_every_format(fmt, built_workspace, capsys):
    rc, out, _ = _run(
        ["sql", "SELECT 1 AS a, 2 AS a, 3 AS a_2", "-w", str(built_workspace.root), "--format", fmt], capsys
    )
    assert rc == 0
    if fmt == "json":
        assert json.loads(out) == [{"a": 1, "a_3": 2, "a_2": 3}]
    elif fmt == "csv":
        assert out.splitlines() == ["a,a_3,a_2", "1,2,3"]
    else:
        header, _, values, *_ = out.splitlines()
        assert header.split() == ["a", "a_3", "a_2"] and values.split() == ["1", "2", "3"]


def test_unique_names_keeps_first_names_and_skips_taken_ones():
    assert unique_names(["a", "a", "a", "a_2", "b"]) == ["a", "a_3", "a_4", "a_2", "b"]


@pytest.mark.parametrize("value", ["1e12", "inf", "nan", "-1", "0", "86401"])
def test_an_absurd_time_limit_is_refused_in_one_line(value, built_workspace, tmp_path, capsys):
    config = tmp_path / "limits.toml"
    config.write_text(f"[sql]\ntimeout_s = {value}\n")
    rc, _, err = _run(["sql", "SELECT 1", "-w", str(built_workspace.root), "--config", str(config)], capsys)
    assert _one_line_error(rc, err) and "timeout_s" in err, err


def test_the_timer_survives_a_huge_limit_given_in_code(built_workspace, monkeypatch):
    """No thread dies with a traceback, and the query still runs, when a caller passes 1e12 s."""
    crashes: list[BaseException] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: crashes.append(args.exc_value))
    result = fetch_query(built_workspace, "SELECT 42 AS x", limits=QueryLimits(timeout_s=1e12))
    assert result.table.to_pylist() == [{"x": 42}] and crashes == []


def test_a_result_over_the_size_limit_is_refused_before_printing(built_workspace, tmp_path, capsys):
    config = tmp_path / "limits.toml"
    config.write_text("[sql]\nmax_result_mb = 1\n")
    sql = "SELECT c.* FROM chunks c, range(2000)"
    rc, out, err = _run(
        ["sql", sql, "-w", str(built_workspace.root), "--format", "csv", "--config", str(config)], capsys
    )
    assert _one_line_error(rc, err) and "sql.max_result_mb" in err and out == ""


def test_a_cut_export_says_so_and_fails_while_the_table_view_counts_every_row(built_workspace, capsys):
    ws = str(built_workspace.root)
    rc, out, err = _run(
        ["sql", "SELECT range AS n FROM range(1000)", "-w", ws, "--format", "csv", "--max-rows", "10"], capsys
    )
    assert rc == 1 and out.splitlines()[1:] == [str(i) for i in range(10)] and "first 10 of 1000 rows" in err
    rc, out, _ = _run(["sql", "SELECT range AS n FROM range(100000)", "-w", ws], capsys)
    assert rc == 0 and out.splitlines()[-1].startswith("(100000 rows) (showing 200")
    rc, _, err = _run(["sql", "SELECT 1", "-w", ws, "--max-rows", "0"], capsys)
    assert _one_line_error(rc, err)


def test_a_huge_result_stays_under_the_process_memory_ceiling(built_workspace, tmp_path):
    """2048 rows of 1 MB strings are one DuckDB vector of 2 GB, outside DuckDB's own memory limit:
    the command's ceiling (memory_limit + 2 x max_result_mb + 384 MB) stops it with one line. Arrow
    allocates from the system allocator there (mimalloc's 1 GiB reservation is room RLIMIT_DATA never
    sees), and resident memory is watched too: glibc's thread arenas grow by mprotect, which the
    limit does not see either (2.6 GB was reached in a whole-suite run without the watch)."""
    config = tmp_path / "limits.toml"
    config.write_text("[sql]\nmemory_limit = '256MB'\nmax_result_mb = 32\n")
    # The command runs as the probe's only child, so the children's peak RSS is the command's own
    # (the command may end itself from its memory watch: nothing after it in that process runs).
    probe = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run([sys.executable, '-m', 'flows.cli.main', *sys.argv[1:]])\n"
        "print('maxrss_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
        "sys.exit(done.returncode)\n"
    )
    sql = "SELECT repeat('x', 1000000) AS s FROM range(3000)"
    args = ["sql", sql, "-w", str(built_workspace.root), "--format", "csv", "--config", str(config)]
    # The command as a user starts it: not with whatever earlier tests left in this process's environment.
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "TMPDIR") if k in os.environ}
    env["PYTHONPATH"] = str(REPO)
    done = subprocess.run(
        [sys.executable, "-c", probe, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    *lines, rss = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("error: "), done.stderr
    assert "memory" in lines[0] or "max_result_mb" in lines[0]
    assert int(rss.split()[1]) < 1000 * 1024, rss  # KB: the ceiling plus start-up, not the 3 GB asked for
    assert done.stdout == ""


@pytest.mark.parametrize(
    "sql",
    [
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
        "SELECT count(*) FROM range(1000000000000)",
        "SELECT * FROM range(1000000000000)",
    ],
)
def test_endless_queries_stop_at_the_time_limit(sql, built_workspace, tmp_path, capsys):
    config = tmp_path / "limits.toml"
    config.write_text("[sql]\ntimeout_s = 0.5\n")
    rc, _, err = _run(["sql", sql, "-w", str(built_workspace.root), "--config", str(config)], capsys)
    assert _one_line_error(rc, err) and ("time limit" in err or "memory" in err), err


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT '" + "x" * 1_000_000 + "' AS big",  # a 1 MB statement
        "SELECT 1 -- \x00 nul in a comment",
        "SELECT '\ud800'",  # a lone surrogate cannot even be encoded
        "SELECT " + "(" * 5000 + "1" + ")" * 5000,  # deep nesting for the parser
        "SELECT ?",  # a parameter nobody gives
        "",
    ],
)
def test_odd_statements_end_in_one_line_or_a_result(sql, built_workspace, trap_folder, capsys):
    before = snapshot(built_workspace.root, trap_folder)
    rc, out, err = _run(["sql", sql, "-w", str(built_workspace.root), "--format", "json"], capsys)
    assert "Traceback" not in err and (rc == 0 or _one_line_error(rc, err)), (sql[:40], err)
    assert snapshot(built_workspace.root, trap_folder) == before


def test_a_slow_query_prints_its_rows_and_nothing_else(built_workspace, capsys, monkeypatch):
    """DuckDB draws a progress bar into stdout for queries over 2 s unless told not to."""
    con = connect(built_workspace)
    try:
        assert con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
    finally:
        con.close()
    sql = "SELECT count(*) AS n FROM range(400000000) WHERE range % 7 = 1"
    rc, out, _ = _run(["sql", sql, "-w", str(built_workspace.root), "--format", "csv"], capsys)
    assert rc == 0 and out.splitlines() == ["n", "57142857"], out
