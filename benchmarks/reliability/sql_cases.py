"""`nkw sql` attacks: writes, reads outside the views, names the sandbox might resolve, results
and queries without bound, settings that break the timer, outputs that drop columns."""

from __future__ import annotations

import json

from benchmarks.reliability.registry import Context, Outcome, case, judged, setup
from benchmarks.reliability.snapshot import snapshot

FAMILY = "sql"
SECRET = "secret-outside-the-workspace"


@setup(FAMILY)
def _trap(ctx: Context):
    """A current folder holding `:memory:` (and its WAL names) as symlinks to a secret file."""
    folder = ctx.scratch / "sql-cwd"
    folder.mkdir(parents=True, exist_ok=True)
    secret = ctx.scratch / "secret.txt"
    secret.write_text(SECRET + "\n")
    for name in (":memory:", ":memory:.wal", "passwd"):
        if not (folder / name).is_symlink():
            (folder / name).symlink_to(secret)
    ctx.shared["sql_cwd"] = folder
    return None


def _sql(ctx: Context, query: str, *extra: str, timeout: float = 90, config: str | None = None):
    args = ["sql", query, "-w", str(ctx.workspace), *extra]
    if config is not None:
        path = ctx.scratch / f"sql-{abs(hash(config))}.toml"
        path.write_text(config)
        args += ["--config", str(path)]
    return ctx.nkw(*args, timeout=timeout, cwd=ctx.shared["sql_cwd"])


def _refused_and_unchanged(ctx: Context, query: str) -> Outcome:
    before = snapshot(ctx.workspace, ctx.shared["sql_cwd"])
    run = _sql(ctx, query)
    outcome = judged(run, expect_error=True)
    if snapshot(ctx.workspace, ctx.shared["sql_cwd"]) != before:
        return Outcome(False, data_loss=True, note="a file changed")
    if SECRET in run.out or "root:" in run.out:
        return Outcome(False, escape=True, note="read outside the workspace")
    return outcome


@case(FAMILY)
def copy_over_a_partition(ctx: Context) -> Outcome:
    target = ctx.workspace / "tables" / "chunks" / "x.parquet"
    return _refused_and_unchanged(ctx, f"COPY (SELECT 1) TO '{target}' (FORMAT parquet)")


@case(FAMILY)
def explain_analyze_copy(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, f"EXPLAIN ANALYZE COPY chunks TO '{ctx.workspace}/x.csv'")


@case(FAMILY)
def attach_a_database(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, f"ATTACH '{ctx.workspace}/evil.db'")


@case(FAMILY)
def re_enable_external_access(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, "SET enable_external_access=true")


@case(FAMILY)
def read_etc_passwd(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, "SELECT * FROM read_csv('/etc/passwd')")


@case(FAMILY)
def read_a_relative_symlink(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, "SELECT content FROM read_text('passwd')")


@case(FAMILY)
def read_memory_symlink(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, "SELECT content FROM read_text(':memory:')")


@case(FAMILY)
def read_wal_symlink(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, "SELECT content FROM read_text(':memory:.wal')")


@case(FAMILY)
def repeated_column_names(ctx: Context) -> Outcome:
    run = _sql(ctx, "SELECT 1 AS a, 2 AS a", "--format", "json")
    outcome = judged(run, expect_error=False)
    if outcome.handled and len(json.loads(run.out)[0]) != 2:
        return Outcome(False, data_loss=True, note="a column was dropped")
    return outcome


@case(FAMILY)
def absurd_time_limit(ctx: Context) -> Outcome:
    return judged(_sql(ctx, "SELECT 1", config="[sql]\ntimeout_s = 1e12\n"), expect_error=True)


@case(FAMILY)
def endless_recursive_query(ctx: Context) -> Outcome:
    query = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r"
    return judged(_sql(ctx, query, config="[sql]\ntimeout_s = 1\n", timeout=60), expect_error=True)


@case(FAMILY)
def result_of_a_trillion_rows(ctx: Context) -> Outcome:
    run = _sql(ctx, "SELECT * FROM range(1000000000000)", config="[sql]\ntimeout_s = 2\n", timeout=60)
    return judged(run, expect_error=True)


@case(FAMILY)
def three_gigabytes_of_strings(ctx: Context) -> Outcome:
    run = _sql(ctx, "SELECT repeat('x', 1000000) AS s FROM range(3000)", "--format", "csv", timeout=180)
    outcome = judged(run, expect_error=True)
    if outcome.handled and run.maxrss_mb > 2048:
        return Outcome(False, note=f"peak memory {run.maxrss_mb:.0f} MB with a 1 GB limit")
    outcome.note = f"peak {run.maxrss_mb:.0f} MB"
    return outcome


@case(FAMILY)
def a_cross_join_export(ctx: Context) -> Outcome:
    run = _sql(ctx, "SELECT c.* FROM chunks c, range(100000)", "--format", "json", timeout=180)
    outcome = judged(run, expect_error=True)
    outcome.note = f"peak {run.maxrss_mb:.0f} MB"
    return outcome


@case(FAMILY)
def an_export_cut_by_max_rows(ctx: Context) -> Outcome:
    run = _sql(ctx, "SELECT range FROM range(1000)", "--format", "csv", "--max-rows", "10")
    if run.rc == 0:
        return Outcome(False, data_loss=True, note="a cut export reported success")
    return judged(run, note="cut, said so, exit 1")


@case(FAMILY)
def a_hundred_kilobyte_statement(ctx: Context) -> Outcome:
    return judged(_sql(ctx, "SELECT '" + "x" * 100_000 + "' AS big", "--format", "csv"), expect_error=False)


@case(FAMILY)
def deep_parenthesis_nesting(ctx: Context) -> Outcome:
    return judged(_sql(ctx, "SELECT " + "(" * 5000 + "1" + ")" * 5000))


@case(FAMILY)
def two_statements(ctx: Context) -> Outcome:
    return _refused_and_unchanged(ctx, "SELECT 1; DROP VIEW chunks")
