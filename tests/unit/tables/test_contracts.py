"""Contract checks reuse one DuckDB connection per thread and skip empty partitions: both must
give the answers of a fresh connection."""

from __future__ import annotations

import ast
import random
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


# -- the checks in Arrow against the same checks written in SQL ------------------------------


def _rows(name: str, **values) -> dict:
    """A row of table `name` with every column None except `values`."""
    return {field.name: values.get(field.name) for field in TABLES[name].schema}


def _sql_counts(name: str, rows, resolve) -> dict[str, int]:
    """What each contract finds, counted in DuckDB SQL (keys, nulls, outside values, missing and
    absent references): the reference the Arrow checks must agree with."""
    spec = TABLES[name]
    con = duckdb.connect()
    con.register("t", rows)
    keys = ", ".join(f'"{k}"' for k in spec.key)
    counts = {
        "duplicate": con.execute(
            f"SELECT count(*) FROM (SELECT {keys} FROM t GROUP BY {keys} HAVING count(*) > 1)"
        ).fetchall()[0][0]
    }
    for column in spec.not_null:
        counts[f"null {column}"] = con.execute(f'SELECT count(*) FROM t WHERE "{column}" IS NULL').fetchall()[
            0
        ][0]
    for column, accepted in spec.accepted_values.items():
        counts[f"outside {column}"] = con.execute(
            f'SELECT count(DISTINCT "{column}") FROM t '
            f'WHERE "{column}" NOT IN ({", ".join("?" for _ in accepted)})',
            list(accepted),
        ).fetchall()[0][0]
    for fk in spec.foreign_keys:
        con.register("ref", resolve(fk.ref_table))
        values = (
            f'(SELECT unnest("{fk.column}") AS v FROM t)'
            if fk.is_list
            else f'(SELECT "{fk.column}" AS v FROM t)'
        )
        counts[f"missing {fk.column}"] = con.execute(
            f"SELECT count(*) FROM {values} "
            f'WHERE v IS NOT NULL AND v NOT IN (SELECT "{fk.ref_column}" FROM ref)'
        ).fetchall()[0][0]
        if not fk.nullable and not fk.is_list:
            counts[f"absent {fk.column}"] = counts[f"null {fk.column}"]
    con.close()
    return counts


def _arrow_counts(problems: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for problem in problems:
        text = problem.split(": ", 1)[1]
        number = int(text.split()[0]) if text[0].isdigit() else 0
        if "duplicate key" in text:
            found["duplicate"] = number
        elif "null value(s) in" in text:
            found[f"null {text.rsplit(' ', 1)[1]}"] = number
        elif "has values outside" in text:
            found[f"outside {text.split()[0]}"] = len(ast.literal_eval(text.rsplit(": ", 1)[1]))
        elif "not found in" in text:
            found[f"missing {text.split()[3]}"] = number
        elif "row(s) with no" in text:
            found[f"absent {text.rsplit(' ', 1)[1]}"] = number
    return found


def test_arrow_checks_find_what_the_sql_checks_find():
    rng = random.Random(5)
    entities = to_arrow("entities", [_rows("entities", entity_id=f"e{i}") for i in range(6)])
    chunks = to_arrow("chunks", [_rows("chunks", chunk_id=f"c{i}") for i in range(3)])
    sections = to_arrow("sections", [_rows("sections", section_id=f"s{i}") for i in range(2)])
    referenced = {"entities": entities, "chunks": chunks, "sections": sections}

    def pick(prefix: str, n: int) -> str | None:  # an id that may be absent or unknown
        return rng.choice([None, f"{prefix}{rng.randrange(n)}"])

    for _ in range(40):
        rows = to_arrow(
            "events",
            [
                _rows(
                    "events",
                    event_id=f"v{rng.randrange(8)}",
                    description=rng.choice([None, "a door opens"]),
                    event_type=rng.choice([None, "action", "arrival", "dance", "song"]),
                    participant_ids=[pick("e", 9) for _ in range(rng.randrange(4))],
                    setting_id=pick("e", 9),
                    chunk_id=pick("c", 5),
                    section_id=pick("s", 3),
                    char_start=0,
                    char_end=1,
                )
                for _ in range(rng.randrange(1, 9))
            ],
        )
        expected = {k: v for k, v in _sql_counts("events", rows, referenced.get).items() if v}
        problems = check_contracts("events", rows, referenced.get)
        assert _arrow_counts([p for p in problems if "invariant" not in p]) == expected


def test_contract_messages_name_the_first_offending_value():
    entities = to_arrow("entities", [_rows("entities", entity_id="e1")])
    rows = to_arrow(
        "events",
        [
            _rows(
                "events",
                event_id="v1",
                description="d",
                event_type="song",
                participant_ids=["e1", "e7", "e8"],
                chunk_id="c1",
                section_id="s1",
                char_start=0,
                char_end=1,
            ),
            _rows(
                "events",
                event_id="v1",
                description="d",
                event_type="dance",
                participant_ids=[None],
                chunk_id="c1",
                section_id="s1",
                char_start=0,
                char_end=1,
            ),
        ],
    )
    problems = check_contracts("events", rows, {"entities": entities}.get)
    assert "events: 1 duplicate key(s) on (event_id)" in problems
    assert any(
        p.startswith("events: event_type has values outside") and p.endswith("['song', 'dance']")
        for p in problems
    )
    assert "events: 2 value(s) of participant_ids not found in entities.entity_id (e.g. 'e7')" in problems
    assert "events: chunk_id references chunks, which has not been built" in problems
