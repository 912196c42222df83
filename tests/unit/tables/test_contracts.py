"""Contract checks reuse one DuckDB connection per thread and skip empty partitions: both must
give the answers of a fresh connection."""

from __future__ import annotations

import threading

import duckdb
import pytest

from schemas.tables import TABLES
from tasks.tables.contracts import check_contracts
from tasks.tables.io import to_arrow


@pytest.mark.parametrize("name", sorted(TABLES))
def test_no_contract_can_fail_on_an_empty_partition(name):
    # check_contracts returns at once for no rows; that is only right while every invariant
    # selects offending rows of the partition itself.
    empty = to_arrow(name, [])
    con = duckdb.connect()
    con.register("t", empty)
    for label, query in TABLES[name].invariants:
        assert con.execute(f"SELECT count(*) FROM ({query.format(t='t')})").fetchall()[0][0] == 0, label
    assert check_contracts(name, empty, lambda t: None) == []


def _section(section_id: str, start: int = 0, end: int = 5) -> dict:
    return {
        "section_id": section_id,
        "doc_id": "d",
        "ordinal": 1,
        "heading": "H",
        "section_kind": "scene",
        "scene_number": None,
        "interior": None,
        "location": None,
        "time_of_day": None,
        "char_start": start,
        "char_end": end,
        "text": "hello",
    }


def test_a_reused_connection_keeps_no_rows_between_checks_or_threads():
    duplicated = to_arrow("sections", [_section("s1"), _section("s1")])
    clean = to_arrow("sections", [_section("s2")])
    assert any("duplicate key" in p for p in check_contracts("sections", duplicated, lambda t: None))
    assert check_contracts("sections", clean, lambda t: None) == []
    chunk = {
        "chunk_id": "c1",
        "doc_id": "d",
        "section_id": "s2",
        "ordinal": 1,
        "text": "t",
        "char_start": 0,
        "char_end": 1,
        "n_tokens": 1,
    }
    chunks = to_arrow("chunks", [chunk])
    assert any("not found" in p for p in check_contracts("chunks", chunks, lambda t: duplicated))
    assert check_contracts("chunks", chunks, lambda t: clean) == []
    results: list[list[str]] = []

    def check() -> None:
        for _ in range(20):
            results.append(check_contracts("sections", duplicated, lambda t: None))
            results.append(check_contracts("sections", clean, lambda t: None))

    threads = [threading.Thread(target=check) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 160
    assert sum(1 for r in results if r) == 80 and all(not r or "duplicate key" in r[0] for r in results)
