import os

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.tables import TABLES
from tasks.tables import ledger
from tasks.tables.io import Workspace, file_sha256, read_table, write_table
from tasks.tables.partition_cache import PARTITIONS, PartitionCache, file_identity
from tests.conftest import SCREENPLAY


def _section(text="hello", doc_id="d"):
    return {
        "section_id": "sec_1",
        "doc_id": doc_id,
        "ordinal": 1,
        "heading": "H",
        "section_kind": "scene",
        "scene_number": None,
        "interior": None,
        "location": None,
        "time_of_day": None,
        "char_start": 0,
        "char_end": 5,
        "text": text,
    }


def test_a_written_partition_is_read_back_from_the_cache(tmp_path):
    workspace = Workspace.at(tmp_path)
    write_table(workspace, "sections", [_section()], "d")
    hits = PARTITIONS.hits
    table = read_table(workspace, "sections", "d")
    assert PARTITIONS.hits == hits + 1
    assert table.schema == TABLES["sections"].schema
    assert read_table(workspace, "sections", "d", columns=["text", "ordinal"]).to_pylist() == [
        {"text": "hello", "ordinal": 1}
    ]


def _file(text):
    return pa.Table.from_pylist([_section(text)], schema=TABLES["sections"].schema)


def test_a_file_changed_on_disk_is_read_from_disk(tmp_path):
    workspace = Workspace.at(tmp_path)
    written = write_table(workspace, "sections", [_section()], "d")
    # Rewritten in place (same inode), as another tool would: the cached table is not served.
    pq.write_table(_file("changed"), written.path)
    ledger.record(workspace.root, written.path, file_sha256(written.path), written.path.stat().st_size)
    assert read_table(workspace, "sections", "d").column("text").to_pylist() == ["changed"]
    # Replaced by rename, as our own writer does.
    replacement = tmp_path / "replacement.parquet"
    pq.write_table(_file("renamed"), replacement)
    os.replace(replacement, written.path)
    ledger.record(workspace.root, written.path, file_sha256(written.path), written.path.stat().st_size)
    assert read_table(workspace, "sections", "d").column("text").to_pylist() == ["renamed"]


def test_a_partial_read_is_not_kept_and_a_whole_read_is(tmp_path):
    workspace = Workspace.at(tmp_path)
    written = write_table(workspace, "sections", [_section()], "d")
    PARTITIONS.clear()
    read_table(workspace, "sections", "d", columns=["text"])
    assert PARTITIONS.size_bytes == 0
    read_table(workspace, "sections", "d")
    hits = PARTITIONS.hits
    assert read_table(workspace, "sections", "d").num_rows == 1
    assert PARTITIONS.hits == hits + 1
    assert file_identity(written.path) is not None
    written.path.unlink()
    assert file_identity(written.path) is None
    assert PARTITIONS.get(written.path) is None


def test_the_least_recently_used_partition_goes_first(tmp_path):
    tables = {}
    for name in "abc":
        path = tmp_path / f"{name}.parquet"
        tables[name] = pa.table({"x": list(range(1000))})
        pq.write_table(tables[name], path)
    one = tables["a"].nbytes
    cache = PartitionCache(max_bytes=2 * one)
    cache.put(tmp_path / "a.parquet", tables["a"])
    cache.put(tmp_path / "b.parquet", tables["b"])
    assert cache.get(tmp_path / "a.parquet") is tables["a"]  # a is now the most recent
    cache.put(tmp_path / "c.parquet", tables["c"])
    assert cache.get(tmp_path / "b.parquet") is None
    assert cache.get(tmp_path / "a.parquet") is tables["a"]
    assert cache.size_bytes == 2 * one
    cache.put(tmp_path / "big.parquet", pa.table({"x": list(range(10_000))}))  # larger than the cache
    assert cache.size_bytes == 2 * one


def test_a_build_reads_the_same_tables_from_the_cache_as_from_disk(tmp_path):
    from flows.corpus import build
    from schemas.config import load_settings

    workspace = Workspace.at(tmp_path / "ws")
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    assert build([str(SCREENPLAY)], workspace, settings, quiet=True).ok
    names = [name for name in TABLES if workspace.partitions(name)]
    hits = PARTITIONS.hits
    cached = {name: read_table(workspace, name) for name in names}
    assert PARTITIONS.hits - hits >= len(names)
    PARTITIONS.clear()
    for name in names:
        assert read_table(workspace, name).equals(cached[name]), name
