"""Partitions nobody wrote through a build are detected: readers leave them out, `nkw inspect`
lists them, and a rebuild replaces an altered partition with what the build writes."""

from __future__ import annotations

import json
import shutil

import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from flows.cli.main import main
from tasks.tables.io import Workspace, read_table
from tests.conftest import SCREENPLAY

DOC = "the_lighthouse_key"


@pytest.fixture()
def workspace(built_workspace, tmp_path):
    copy = tmp_path / "ws"
    shutil.copytree(built_workspace.root, copy)
    return Workspace.at(copy)


def _sql(ws: Workspace, sql: str, capsys) -> list[dict]:
    assert main(["sql", sql, "-w", str(ws.root), "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def _inspect(ws: Workspace, capsys) -> dict:
    assert main(["inspect", "-w", str(ws.root), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_an_extra_file_is_not_read_and_is_flagged(workspace, capsys):
    documents = workspace.table_dir("documents")
    evil = pq.read_table(documents / f"{DOC}.parquet")
    evil = evil.set_column(
        evil.schema.get_field_index("doc_id"), "doc_id", pc.cast(pc.utf8_upper(evil["doc_id"]), "string")
    )
    pq.write_table(evil, documents / "evil.parquet")
    assert _sql(workspace, "SELECT doc_id FROM documents", capsys) == [{"doc_id": DOC}]
    assert read_table(workspace, "documents").num_rows == 1
    report = _inspect(workspace, capsys)
    assert report["partitions"]["unknown"] == ["tables/documents/evil.parquet"]
    assert [d["doc_id"] for d in report["documents"]] == [DOC]
    assert main(["inspect", "-w", str(workspace.root)]) == 0
    assert (
        "UNKNOWN (not written by a build; not read): tables/documents/evil.parquet" in capsys.readouterr().out
    )


def test_an_altered_partition_is_not_read_and_a_rebuild_restores_it(workspace, capsys, hashing_settings):
    chunks_file = workspace.table_dir("chunks") / f"{DOC}.parquet"
    original = pq.read_table(chunks_file)
    attacked = original.set_column(
        original.schema.get_field_index("text"),
        "text",
        pc.cast(pc.binary_replace_slice(original["text"], 0, 0, "ATTACKER TEXT "), "string"),
    )
    pq.write_table(attacked, chunks_file)
    assert _sql(workspace, "SELECT count(*) AS n FROM chunks WHERE text LIKE '%ATTACKER%'", capsys) == [
        {"n": 0}
    ]
    assert _inspect(workspace, capsys)["partitions"]["altered"] == [f"tables/chunks/{DOC}.parquet"]
    rc = main(["ask", "Who keeps the lighthouse key?", "-w", str(workspace.root), "--embeddings", "hashing"])
    captured = capsys.readouterr()
    assert "ATTACKER" not in captured.out
    assert rc != 0 and "run `nkw build` again" in captured.err
    # The manifest no longer matches the file, so the next build rewrites it.
    assert (
        main(
            [
                "build",
                str(SCREENPLAY),
                "-w",
                str(workspace.root),
                "--embeddings",
                "hashing",
                "--no-prefect",
                "-q",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert _sql(workspace, "SELECT count(*) AS n FROM chunks", capsys) == [{"n": original.num_rows}]
    check = _inspect(workspace, capsys)["partitions"]
    assert check["verified"] and check["trusted"] > 20 and check["unknown"] == [] and check["altered"] == []
