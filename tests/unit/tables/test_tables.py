import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.tables import TABLES
from tasks.tables.contracts import check_contracts
from tasks.tables import ledger
from tasks.tables.io import SchemaError, Workspace, file_sha256, read_table, to_arrow, write_table


def _section(section_id="sec_1", doc_id="d", start=0, end=5):
    return {
        "section_id": section_id,
        "doc_id": doc_id,
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


def test_every_table_declares_key_grain_and_columns():
    for name, table_spec in TABLES.items():
        assert table_spec.key, name
        assert table_spec.grain, name
        assert set(table_spec.key) <= set(table_spec.columns), name
        assert set(table_spec.not_null) <= set(table_spec.columns), name
        if table_spec.partition == "document":
            assert "doc_id" in table_spec.columns, name


def test_write_rejects_missing_and_unknown_columns(tmp_path):
    workspace = Workspace.at(tmp_path)
    row = _section()
    with pytest.raises(SchemaError, match="missing columns"):
        write_table(workspace, "sections", [{k: v for k, v in row.items() if k != "heading"}], "d")
    with pytest.raises(SchemaError, match="unknown columns"):
        write_table(workspace, "sections", [{**row, "extra": 1}], "d")
    with pytest.raises(SchemaError, match="do not fit"):
        write_table(workspace, "sections", [{**row, "ordinal": "first"}], "d")


def test_write_rejects_rows_of_another_document(tmp_path):
    with pytest.raises(SchemaError, match="partition"):
        write_table(Workspace.at(tmp_path), "sections", [_section(doc_id="other")], "d")


def test_roundtrip_casts_to_declared_schema(tmp_path):
    workspace = Workspace.at(tmp_path)
    result = write_table(workspace, "sections", [_section()], "d")
    assert result.rows == 1 and result.path.name == "d.parquet"
    table = read_table(workspace, "sections", "d")
    assert table.schema == TABLES["sections"].schema
    assert table.column("heading").to_pylist() == ["H"]
    # No temp files left behind by the atomic write.
    assert [p.name for p in result.path.parent.iterdir()] == ["d.parquet"]


def test_read_returns_requested_columns_in_the_order_asked(tmp_path):
    workspace = Workspace.at(tmp_path)
    write_table(workspace, "sections", [_section()], "d")
    table = read_table(workspace, "sections", "d", columns=["text", "section_id"])
    assert table.column_names == ["text", "section_id"]
    assert table.to_pylist() == [{"text": "hello", "section_id": "sec_1"}]


def test_partition_written_before_a_column_was_declared_reads_it_as_null(tmp_path):
    workspace = Workspace.at(tmp_path)
    written = write_table(workspace, "sections", [_section()], "d")
    older = pq.read_table(written.path).drop_columns(["time_of_day"])
    pq.write_table(older, written.path)
    ledger.record(workspace.root, written.path, file_sha256(written.path), written.path.stat().st_size)
    table = read_table(workspace, "sections", "d")
    assert table.schema == TABLES["sections"].schema
    assert table.column("time_of_day").to_pylist() == [None]
    assert table.column("heading").to_pylist() == ["H"]


def test_identical_rows_give_identical_files(tmp_path):
    a = write_table(Workspace.at(tmp_path / "a"), "sections", [_section()], "d")
    b = write_table(Workspace.at(tmp_path / "b"), "sections", [_section()], "d")
    assert a.sha256 == b.sha256


def test_empty_and_missing_tables_read_as_typed_empty(tmp_path):
    workspace = Workspace.at(tmp_path)
    assert read_table(workspace, "chunks").num_rows == 0
    write_table(workspace, "failures", [], "d", "segment_sections")
    assert read_table(workspace, "failures", "d").schema == TABLES["failures"].schema


def test_side_tables_need_a_stage(tmp_path):
    with pytest.raises(ValueError, match="stage"):
        write_table(Workspace.at(tmp_path), "failures", [], "d")


def test_contracts_catch_duplicates_nulls_values_and_foreign_keys():
    sections = to_arrow("sections", [_section(), _section()])
    problems = check_contracts("sections", sections, lambda t: None)
    assert any("duplicate key" in p for p in problems)
    bad_kind = to_arrow("sections", [{**_section(), "section_kind": "act"}])
    assert any("section_kind" in p for p in check_contracts("sections", bad_kind, lambda t: None))
    bad_span = to_arrow("sections", [_section(start=9, end=2)])
    assert any("span inside document" in p for p in check_contracts("sections", bad_span, lambda t: None))
    chunk = {
        "chunk_id": "chk_1",
        "doc_id": "d",
        "section_id": "sec_missing",
        "ordinal": 1,
        "text": "t",
        "char_start": 0,
        "char_end": 1,
        "n_tokens": 1,
    }
    chunks = to_arrow("chunks", [chunk])
    assert any("not found in sections" in p for p in check_contracts("chunks", chunks, lambda t: sections))
    assert any("has not been built" in p for p in check_contracts("chunks", chunks, lambda t: None))
    good = to_arrow("chunks", [{**chunk, "section_id": "sec_1"}])
    assert check_contracts("chunks", good, lambda t: to_arrow("sections", [_section()])) == []


def test_null_key_is_reported():
    rows = to_arrow("sections", [{**_section(), "heading": None}])
    assert any("null" in p and "heading" in p for p in check_contracts("sections", rows, lambda t: None))


def test_to_arrow_accepts_frames_and_tables():
    import pandas as pd

    frame = pd.DataFrame([_section()])
    assert to_arrow("sections", frame).num_rows == 1
    assert to_arrow("sections", pa.Table.from_pylist([_section()])).num_rows == 1
