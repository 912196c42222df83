"""Query-time reads of one document: DuckDB queries over the workspace views
(`tasks.tables.warehouse`), with each view restricted to the document's own partitions.

A reader is opened once per document and process and cached; it is rebuilt only when one of the
document's partition files changes (a rebuild of the document), so every session after the
first skips the Parquet scan and the DuckDB set-up. The cache keeps the readers of the documents
used last (`MAX_READERS`): a reader holds its document's rows, and an evaluation over a corpus
reads every document once.
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from pathlib import Path

import pandas as pd
import pyarrow as pa

from schemas.tables import TABLES
from tasks.tables.io import Workspace
from tasks.tables.warehouse import QueryLimits, connect, load_sql

ROWS_QUERY = load_sql("store/document_rows")


class DocumentReader:
    """A DuckDB connection whose views hold one document's partitions; rows come back as Arrow."""

    def __init__(self, workspace: Workspace, doc_id: str, files: dict[str, list[Path]]) -> None:
        self.doc_id = doc_id
        self._con = connect(workspace, QueryLimits(timeout_s=600.0), verify=False, files=files)
        self._lock = threading.Lock()
        self._tables: dict[tuple[str, tuple[str, ...] | None], pa.Table] = {}

    def table(self, name: str, columns: list[str] | None = None) -> pa.Table:
        """The document's rows of `name`, typed by the declared schema (cached per reader)."""
        key = (name, tuple(columns) if columns else None)
        with self._lock:
            if key not in self._tables:
                schema = TABLES[name].schema
                if columns:
                    schema = pa.schema([schema.field(c) for c in columns])
                sql = ROWS_QUERY.format(
                    table=name, columns=", ".join(f'"{c}"' for c in schema.names)
                )
                found = self._con.sql(sql, params={"doc_id": self.doc_id}).to_arrow_table()
                self._tables[key] = found.cast(schema)
            return self._tables[key]

    def frame(self, name: str, columns: list[str] | None = None) -> pd.DataFrame:
        """`table` as pandas, as `tasks.tables.io.read_frame` converts it."""
        return self.table(name, columns).to_pandas(types_mapper=None)

    def close(self) -> None:
        with self._lock:
            self._con.close()
            self._tables.clear()

    def connection(self):
        """The reader's DuckDB connection and the lock that serialises its use across threads."""
        return self._con, self._lock


MAX_READERS = 16
_READERS: "OrderedDict[tuple[str, str], tuple[tuple, DocumentReader]]" = OrderedDict()
_READERS_LOCK = threading.Lock()


def _stamp(files: dict[str, list[Path]]) -> tuple:
    found = []
    for name in sorted(files):
        for path in files[name]:
            stat = path.stat()
            found.append((str(path), stat.st_mtime_ns, stat.st_size))
    return tuple(found)


def document_reader(workspace: Workspace, doc_id: str) -> DocumentReader:
    """The cached reader of `doc_id` in `workspace` (a new one when its partitions changed)."""
    files = {
        name: workspace.partitions(name, doc_id) for name in TABLES if "doc_id" in TABLES[name].schema.names
    }
    stamp = _stamp(files)
    key = (str(workspace.root.resolve()), doc_id)
    with _READERS_LOCK:
        cached = _READERS.get(key)
        if cached is not None and cached[0] == stamp:
            _READERS.move_to_end(key)
            return cached[1]
        reader = DocumentReader(workspace, doc_id, files)
        _READERS[key] = (stamp, reader)
        _READERS.move_to_end(key)
        while len(_READERS) > MAX_READERS:
            # Not closed: a store may be loading from it in another thread; dropped, it is freed.
            _READERS.popitem(last=False)
        return reader


@atexit.register
def close_readers() -> None:
    """Close every cached connection before the interpreter tears DuckDB down (left open, each
    one is reported as a leak on exit)."""
    with _READERS_LOCK:
        for _, reader in _READERS.values():
            reader.close()
        _READERS.clear()
