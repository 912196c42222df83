import pytest

from flows.stages import STAGES, select_stages
from schemas.tables import TABLES


def test_every_table_read_is_written_by_an_earlier_stage():
    written: set[str] = set()
    for stage in STAGES:
        for table in stage.reads:
            assert table in written, f"{stage.name} reads {table} before any stage writes it"
        written.update(stage.writes)


def test_each_table_has_one_writer_and_is_declared():
    writers: dict[str, str] = {}
    for stage in STAGES:
        for table in stage.writes:
            assert table in TABLES, table
            assert table not in writers, f"{table} written by {writers.get(table)} and {stage.name}"
            writers[table] = stage.name


def test_stage_names_are_unique_and_module_named():
    names = [s.name for s in STAGES]
    assert len(names) == len(set(names))
    for stage in STAGES:
        assert stage.run.__module__.endswith(f".{stage.name}"), stage.name
        assert stage.run.__module__.startswith("tasks."), stage.name


def test_select_stages():
    assert [s.name for s in select_stages(until="split_chunks")] == ["ingest_documents", "segment_sections", "split_chunks"]
    assert [s.name for s in select_stages(["split_chunks", "ingest_documents"])] == ["ingest_documents", "split_chunks"]
    with pytest.raises(ValueError, match="unknown stage"):
        select_stages(["nope"])
