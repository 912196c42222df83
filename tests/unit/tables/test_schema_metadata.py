"""What the specs put into the Parquet schema: a description per column, non-null keys (a null key is
refused by the writer with a one-line error), and the former JSON-text columns as native types
DuckDB reads without parsing text; the data dictionary derived from the same specs."""

from __future__ import annotations

import json

import duckdb
import pyarrow.parquet as pq
import pytest

from schemas.tables import TABLES
from schemas.tables.dictionary import data_dictionary
from schemas.tables.spec import STR, columns
from tasks.tables.io import SchemaError, Workspace, read_frame, write_table


def test_every_column_of_every_table_has_a_one_line_description():
    for table in TABLES.values():
        for field in table.schema:
            text = field.metadata[b"description"].decode()
            assert text.strip() and "\n" not in text and len(text) <= 110, (table.name, field.name)
        for key in table.key:
            assert key in table.not_null and not table.schema.field(key).nullable, (table.name, key)


def test_a_column_without_a_description_is_refused():
    with pytest.raises(ValueError, match="description"):
        columns(("mystery", STR))
    assert columns(("doc_id", STR))[0].description  # shared columns take the common text


def test_data_dictionary_lists_every_table_and_column():
    entries = {entry["table"]: entry for entry in data_dictionary()}
    assert set(entries) == set(TABLES)
    for name, table in TABLES.items():
        entry = entries[name]
        assert entry["grain"] == table.grain and entry["key"] == list(table.key)
        assert [c["name"] for c in entry["columns"]] == table.columns
        for column in entry["columns"]:
            assert column["type"] and column["description"]
            assert column["nullable"] == table.schema.field(column["name"]).nullable
    board = next(c for c in entries["qa_answers"]["columns"] if c["name"] == "board")
    assert board["type"].startswith("struct<entity_items: int64")
    assert next(c for c in entries["documents"]["columns"] if c["name"] == "meta")["type"] == "json"
    json.dumps(data_dictionary())  # JSON-ready


def _trace(arguments: str | None) -> dict:
    return {
        "run_id": "r1",
        "qid": "q1",
        "sample": 0,
        "call_index": 0,
        "round": 0,
        "tool": "search",
        "arguments": arguments,
        "rows": 3,
        "tokens": 10,
        "ms": 1.5,
        "kinds": ["chunk"],
    }


def test_a_null_key_is_refused_with_its_column_named(tmp_path):
    row = {**_trace("{}"), "qid": None}
    with pytest.raises(SchemaError, match="null value.* in qid"):
        write_table(Workspace.at(tmp_path), "qa_traces", [row], "r1")


def test_duckdb_reads_board_arguments_and_payload_natively(tmp_path):
    workspace = Workspace.at(tmp_path)
    write_table(workspace, "qa_traces", [_trace(json.dumps({"query": "the key", "top_k": 5}))], "r1")
    answer = {column: None for column in TABLES["qa_answers"].columns}
    answer.update(run_id="r1", benchmark="b", qid="q1", doc_id="d", system="nkw", sample=0, question="?")
    answer.update(status="answered", board={"entity_items": 2, "passages": 4, "source_tokens": 900})
    write_table(workspace, "qa_answers", [answer], "r1")
    unit = {"raw_unit_id": "u1", "doc_id": "d", "chunk_id": "c1", "kind": "event", "position": 0}
    write_table(workspace, "raw_units", [{**unit, "payload": '{"description": "x"}', "method": "llm"}], "d")
    con = duckdb.connect()

    def one(sql: str, table: str) -> tuple:
        files = f"read_parquet('{workspace.tables_dir / table}/*.parquet')"
        return con.execute(sql.replace("{t}", files)).fetchone()

    assert one("SELECT arguments->>'$.query', typeof(arguments) FROM {t}", "qa_traces") == ("the key", "JSON")
    assert one("SELECT board.passages, board.facts FROM {t}", "qa_answers") == (4, None)
    assert one("SELECT payload->>'$.description' FROM {t}", "raw_units") == ("x",)
    assert read_frame(workspace, "qa_traces").iloc[0]["arguments"] == '{"query": "the key", "top_k": 5}'
    assert not pq.read_schema(workspace.tables_dir / "qa_answers" / "r1.parquet").field("qid").nullable


def test_board_struct_holds_every_field_of_the_board_composition():
    # A struct drops keys it does not declare: the composition and the column must name the same fields.
    from schemas.tables.spec import BOARD
    from tasks.query.evidence.board import EvidenceBoard

    composition = EvidenceBoard([], [], [], [], source_budget=100).composition()
    assert [field.name for field in BOARD] == list(composition)
