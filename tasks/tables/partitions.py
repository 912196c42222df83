"""Which Parquet files count: the partitions listing for readers outside NKW.

A DuckDB or Spark glob over `tables/<table>/*.parquet` also reads files the writer never recorded
(a stray copy, a file edited by hand); `nkw sql` reads only the partitions the ledger vouches for
(`tasks.tables.ledger`). The listing names exactly those files, so an outside reader counts what
`nkw sql` counts: the `partitions` view in `nkw sql`, and `partitions.json` at the workspace root,
rewritten at the end of every build, evaluation and removal (one record per partition, paths
relative to the workspace root, with the row count from the Parquet footer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from schemas.tables import TABLES
from schemas.tables.spec import INT, STR
from tasks.files import open_regular, read_text
from tasks.tables import ledger
from tasks.tables.io import Workspace, atomic_write_text

LISTING_NAME = "partitions.json"

# Declared once, for the view and the file alike (the file adds `rows`).
LISTING_FIELDS = (
    ("table", STR, "Workspace table the file belongs to"),
    ("path", STR, "File path relative to the workspace root (tables/<table>/<file>.parquet)"),
    ("part", STR, "Document id or run id the file holds"),
    ("stage", STR, "Stage that wrote it, for tables partitioned by document and stage"),
    ("bytes", INT, "File size in bytes"),
    ("sha256", STR, "sha256 of the file as the ledger recorded it (null before the ledger existed)"),
)
ROWS_FIELD = ("rows", INT, "Rows in the file (from its Parquet footer)")


def listing_schema(with_rows: bool = False) -> pa.Schema:
    fields = LISTING_FIELDS + ((ROWS_FIELD,) if with_rows else ())
    return pa.schema([pa.field(n, t, metadata={"description": d}) for n, t, d in fields])


def listing_path(workspace: Workspace) -> Path:
    # At the root, not in manifest/: every JSON file there is a document's build manifest.
    return workspace.root / LISTING_NAME


def partition_records(
    workspace: Workspace,
    files: dict[str, list[Path]],
    with_rows: bool = False,
    known_rows: dict[tuple[str, str], int] | None = None,
) -> list[dict[str, Any]]:
    """One record per valid partition of every table, in table then file order. With `with_rows`, the
    row count comes from `known_rows` ((path, sha256) -> rows) or else the file's Parquet footer."""
    records = []
    for name in sorted(files):
        for path in sorted(files[name]):
            # A document id may hold `__` itself; only a per-(document, stage) file ends in `__<stage>`.
            by_stage = TABLES[name].partition == "document_stage" and "__" in path.stem
            part, stage = path.stem.rsplit("__", 1) if by_stage else (path.stem, None)
            record: dict[str, Any] = {
                "table": name,
                "path": path.relative_to(workspace.root).as_posix(),
                "part": part,
                "stage": stage,
                "bytes": path.stat().st_size,
                "sha256": _recorded_sha256(workspace, path),
            }
            if with_rows:
                known = (known_rows or {}).get((record["path"], record["sha256"]))
                record["rows"] = known if known is not None else _footer_rows(path)
            records.append(record)
    return records


def _footer_rows(path: Path) -> int:
    with open_regular(path) as handle, pq.ParquetFile(handle) as file:
        return file.metadata.num_rows


def _recorded_sha256(workspace: Workspace, path: Path) -> str | None:
    try:
        return json.loads(read_text(ledger.entry_path(workspace.root, path)))["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        return None  # a workspace from before the ledger


def _previous_rows(path: Path) -> dict[tuple[str, str], int]:
    """Row counts of the last listing by (path, sha256): an unchanged file's footer is not read again
    (opening footers costs about a millisecond a file, at the end of every build)."""
    try:
        records = json.loads(read_text(path))
        return {(r["path"], r["sha256"]): int(r["rows"]) for r in records if r.get("sha256")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def partitions_table(workspace: Workspace, files: dict[str, list[Path]]) -> pa.Table:
    """The `partitions` view of `nkw sql`: the files its table views read (no footers opened)."""
    return pa.Table.from_pylist(partition_records(workspace, files), schema=listing_schema())


def write_listing(workspace: Workspace) -> Path:
    """Rewrite `partitions.json` from the ledger: the files a reader should count."""
    files = {name: workspace.partitions(name) for name in TABLES}
    path = listing_path(workspace)
    records = partition_records(workspace, files, with_rows=True, known_rows=_previous_rows(path))
    atomic_write_text(path, json.dumps(records, indent=0, ensure_ascii=False) + "\n")
    return path
