"""Query-time stores load through DuckDB queries over the workspace views: the same rows as the
Parquet reader, one cached reader per document and process, a fresh one after a rebuild."""

from __future__ import annotations

import os

import duckdb
import pandas as pd
import pytest

from tasks.query.store.doc_index import DocumentIndex
from tasks.query.store.document_store import ASSET_TABLES, NarrativeStore, close_stores
from tasks.query.store.reader import document_reader
from tasks.tables.io import read_frame


def _doc_id(workspace) -> str:
    return str(read_frame(workspace, "documents")["doc_id"].iloc[0])


def test_reader_rows_equal_parquet_rows(sample_workspace):
    doc_id = _doc_id(sample_workspace)
    reader = document_reader(sample_workspace, doc_id)
    for name in (
        "documents",
        "sections",
        "chunks",
        "sentences",
        "embeddings",
        "asset_embeddings",
        *ASSET_TABLES,
    ):
        expected = read_frame(sample_workspace, name, doc_id)
        found = reader.frame(name)
        assert list(found.columns) == list(expected.columns), name
        assert list(found.dtypes.astype(str)) == list(expected.dtypes.astype(str)), name
        pd.testing.assert_frame_equal(found.astype(str), expected.astype(str), obj=name)


def test_one_reader_per_document_until_its_partitions_change(sample_workspace):
    doc_id = _doc_id(sample_workspace)
    first = document_reader(sample_workspace, doc_id)
    assert document_reader(sample_workspace, doc_id) is first
    index = DocumentIndex.load(sample_workspace, doc_id)
    store = NarrativeStore.load(sample_workspace, doc_id, index)
    assert len(index.sentences) == len(read_frame(sample_workspace, "sentences", doc_id))
    assert len(store.tables["entities"]) == len(read_frame(sample_workspace, "entities", doc_id))
    # A rebuilt partition (new modification time) gets a new reader.
    path = sample_workspace.partitions("chunks", doc_id)[0]
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    try:
        assert document_reader(sample_workspace, doc_id) is not first
    finally:
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_store_connections_are_closed_at_exit_and_reopen_on_the_next_query(sample_workspace):
    # Left open, DuckDB reports every connection as a leak when the interpreter exits.
    store = NarrativeStore.load(sample_workspace, _doc_id(sample_workspace))
    columns, rows = store.sql("SELECT count(*) AS n FROM entities", {})
    connection = store._sql[0]
    close_stores()
    assert "_sql" not in store.__dict__
    with pytest.raises(duckdb.ConnectionException, match="closed"):
        connection.execute("SELECT 1")
    assert store.sql("SELECT count(*) AS n FROM entities", {}) == (columns, rows)
