"""`nkw sql` prints values Python cannot hold (infinity dates, timestamps past year 9999, UHUGEINT)
as DuckDB writes them, in every format, without losing the rest of the row."""

from __future__ import annotations

import csv
import io
import json

import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace
from tests.faults.attack_kit import INGEST_ONLY, GOOD_TEXT, nkw_in_process

CASES = {  # expression -> the value as JSON gives it back
    "'infinity'::DATE": "infinity",
    "'-infinity'::TIMESTAMP": "-infinity",
    "'infinity'::TIMESTAMPTZ": "infinity",
    "'294247-01-01'::TIMESTAMP": "294247-01-01 00:00:00",
    "INTERVAL 5 MONTH": "5 months",
    "340282366920938463463374607431768211455::UHUGEINT": "340282366920938463463374607431768211455",
    "['infinity'::DATE, DATE '2020-01-01']": ["infinity", "2020-01-01"],
    "{'t': 'infinity'::TIMESTAMP, 'n': 1}": {"t": "infinity", "n": 1},
    "MAP {'k': 'infinity'::DATE}": {"k": "infinity"},
}


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> Workspace:
    root = tmp_path_factory.mktemp("printable")
    (root / "a.txt").write_text(GOOD_TEXT)
    workspace = Workspace.at(root / "ws")
    assert main(["build", str(root / "a.txt"), "-w", str(workspace.root), *INGEST_ONLY]) == 0
    return workspace


@pytest.mark.parametrize("expression", list(CASES))
def test_every_format_prints_the_value_and_the_rest_of_the_row(expression, ws, capsys):
    query = f"SELECT 1 AS before, {expression} AS v, 'after' AS after"
    result = nkw_in_process(capsys, "sql", query, "-w", ws.root, "--format", "json")
    assert result.code == 0, result.err
    assert json.loads(result.out) == [{"before": 1, "v": CASES[expression], "after": "after"}]
    for fmt in ("table", "csv"):
        result = nkw_in_process(capsys, "sql", query, "-w", ws.root, "--format", fmt)
        assert result.code == 0 and "after" in result.out, result.err
        assert any(word in result.out for word in ("infinity", "months", "294247", "3402"))
    csv_out = nkw_in_process(capsys, "sql", query, "-w", ws.root, "--format", "csv").out
    rows = list(csv.reader(io.StringIO(csv_out)))
    assert rows[0] == ["before", "v", "after"] and rows[1][2] == "after"


def test_huge_decimals_blobs_and_repeated_names_keep_their_row(ws, capsys):
    query = ("SELECT 12345678901234567890123456789012345678::DECIMAL(38,0) AS d, '\\x00\\xff'::BLOB AS b, "
             "'infinity'::DATE AS a, 2 AS a")
    result = nkw_in_process(capsys, "sql", query, "-w", ws.root, "--format", "json")
    assert result.code == 0, result.err
    row = json.loads(result.out)[0]
    assert row["a"] == "infinity" and row["a_2"] == 2 and row["b"] == "00ff"
    assert str(row["d"]) == "12345678901234567890123456789012345678"


def test_a_refused_file_read_is_not_blamed_on_the_memory_limit(ws, capsys):
    result = nkw_in_process(capsys, "sql", "SELECT * FROM read_text(':memory:')", "-w", ws.root)
    result.clean_failure()
    assert "memory limit" not in result.err and "sql.memory_limit" not in result.err
