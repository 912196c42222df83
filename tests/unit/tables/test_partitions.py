"""The partitions listing: the files the writer recorded, with their rows, rewritten on demand (a
rewritten partition gets its new count; a stray file is never listed)."""

from __future__ import annotations

import json
import shutil

from tasks.tables.io import Workspace, write_table
from tasks.tables.partitions import listing_path, partitions_table, write_listing


def _failure(item: str) -> dict:
    return {"doc_id": "d", "stage": "s", "item_id": item, "error": "e", "payload": None}


def test_listing_follows_rewrites_and_ignores_stray_files(tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    first = write_table(workspace, "failures", [_failure("a")], "d", "s")
    write_listing(workspace)
    write_table(workspace, "failures", [_failure("a"), _failure("b"), _failure("c")], "d", "s")
    shutil.copy(first.path, first.path.with_name("stray.parquet"))
    write_listing(workspace)
    records = json.loads(listing_path(workspace).read_text(encoding="utf-8"))
    assert [(r["table"], r["path"], r["part"], r["stage"], r["rows"]) for r in records] == [
        ("failures", "tables/failures/d__s.parquet", "d", "s", 3)
    ]
    view = partitions_table(workspace, {"failures": workspace.partitions("failures")})
    assert view.column("path").to_pylist() == ["tables/failures/d__s.parquet"]
    assert view.schema.field("sha256").metadata[b"description"]
