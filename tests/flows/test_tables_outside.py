"""The workspace's tables as an outside tool reads them: descriptions and non-null keys in the
Parquet schema, the former JSON-text columns as DuckDB lists, structs and JSON, the partitions
listing that tells which files count (a stray file changes a glob's count, not the listing's),
and a whole-workspace export with directed interaction edges."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import networkx as nx
import pyarrow.parquet as pq
import pytest

from flows.cli.main import main
from schemas.tables import TABLES
from tasks.tables.io import Workspace, read_frame
from tasks.tables.partitions import listing_path
from tasks.tables.warehouse import run_query


def test_every_written_file_describes_its_columns_and_keeps_keys_non_null(sample_workspace):
    files = sorted(sample_workspace.tables_dir.glob("*/*.parquet"))
    assert len({f.parent.name for f in files}) >= 30
    for path in files:
        table = TABLES[path.parent.name]
        schema = pq.read_schema(path)
        assert schema.names == table.columns, path
        for field in schema:
            assert field.metadata and field.metadata[b"description"].strip(), (path, field.name)
        for key in table.key:
            assert not schema.field(key).nullable, (path, key)
        assert table.partition == "run" or not schema.field("doc_id").nullable, path


def test_duckdb_reads_cues_as_a_list_of_structs(sample_workspace):
    con = duckdb.connect()
    glob = str(sample_workspace.tables_dir / "continuity_chains" / "*.parquet")
    described = dict(r[:2] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{glob}')").fetchall())
    assert described["cues"].startswith("STRUCT(entity_id VARCHAR") and described["cues"].endswith("[]")
    rows = con.execute(
        f"SELECT c.name, c.spans[1].section_id, section_ids[1] FROM "
        f"(SELECT unnest(cues) AS c, section_ids FROM read_parquet('{glob}') WHERE kind = 'final')"
    ).fetchall()
    assert rows and all(name and first == scene for name, first, scene in rows)
    meta = str(sample_workspace.tables_dir / "documents" / "*.parquet")
    described = con.execute(f"DESCRIBE SELECT meta FROM read_parquet('{meta}')").fetchall()
    assert [r[1] for r in described] == ["JSON"]


@pytest.fixture()
def copied(sample_workspace, tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    shutil.copytree(sample_workspace.root, root, ignore=shutil.ignore_patterns("variants", "cache"))
    return Workspace.at(root)


def test_partitions_listing_counts_what_nkw_sql_counts_with_a_stray_file(copied: Workspace, capsys):
    # The build wrote the listing; the stray file comes after it, as a copy made by hand would.
    listing = json.loads(listing_path(copied).read_text(encoding="utf-8"))
    entities = [r for r in listing if r["table"] == "entities"]
    assert {r["part"] for r in entities} == {"the_lighthouse_key", "the_fisherman_and_his_wife"}
    stray = copied.tables_dir / "entities" / "stray.parquet"
    shutil.copy(copied.root / entities[0]["path"], stray)

    counted = run_query(copied, "SELECT count(*) AS n FROM entities").to_pylist()[0]["n"]
    con = duckdb.connect()
    glob = str(copied.tables_dir / "entities" / "*.parquet")
    globbed = con.execute(f"SELECT count(*) FROM read_parquet('{glob}')").fetchone()[0]
    paths = [str(copied.root / r["path"]) for r in entities]
    listed = con.execute("SELECT count(*) FROM read_parquet(?)", [paths]).fetchone()[0]
    assert counted == listed == sum(r["rows"] for r in entities) and globbed == counted + entities[0]["rows"]
    # The DuckDB lines of docs/view.md, run in the workspace folder.
    con.execute(f"SET file_search_path = '{copied.root}'")
    con.execute(
        "SET VARIABLE files = "
        "(SELECT list(path) FROM read_json('partitions.json') WHERE \"table\" = 'entities')"
    )
    assert con.execute("SELECT count(*) FROM read_parquet(getvariable('files'))").fetchone()[0] == counted

    # The same files in nkw sql's `partitions` view (and the stray one nowhere).
    viewed = run_query(copied, "SELECT path, part FROM partitions WHERE \"table\" = 'entities' ORDER BY path")
    assert viewed.column("path").to_pylist() == sorted(r["path"] for r in entities)
    assert main(["sql", "--workspace", str(copied.root), "SELECT count(*) AS n FROM partitions"]) == 0
    assert str(len(listing)) in capsys.readouterr().out


def test_remove_rewrites_the_listing(copied: Workspace):
    assert main(["remove", "--workspace", str(copied.root), "the_fisherman_and_his_wife"]) == 0
    listing = json.loads(listing_path(copied).read_text(encoding="utf-8"))
    assert listing and {r["part"] for r in listing if r["table"] == "entities"} == {"the_lighthouse_key"}


@pytest.mark.parametrize("fmt", ["graphml", "csv"])
def test_workspace_export_holds_every_document_with_directed_interactions(sample_workspace, tmp_path, fmt):
    out = tmp_path / "all"
    args = ["export", "--workspace", str(sample_workspace.root), "--format", fmt, "--out", str(out)]
    assert main(args) == 0
    documents = set(read_frame(sample_workspace, "documents")["doc_id"])
    entities = read_frame(sample_workspace, "entities")
    interactions = read_frame(sample_workspace, "interactions")
    pairs = {
        (s, o)
        for s, objects in zip(interactions["subject_id"], interactions["object_ids"])
        for o in objects
        if s is not None and s != o
    }
    assert len(pairs) > 0
    if fmt == "graphml":
        graph = nx.read_graphml(out / f"{sample_workspace.root.name}.entities.graphml")
        assert set(graph.nodes) == set(entities["entity_id"])
        assert {d["doc_id"] for _, d in graph.nodes(data=True)} == documents
        directed = nx.read_graphml(out / f"{sample_workspace.root.name}.interactions.graphml")
        assert directed.is_directed() and set(directed.edges) == pairs
        # subject -> object: the reverse of a one-way interaction is not an edge
        one_way = next((s, o) for s, o in pairs if (o, s) not in pairs)
        assert not directed.has_edge(one_way[1], one_way[0])
        episodes = nx.read_graphml(out / f"{sample_workspace.root.name}.episodes.graphml")
        assert {d["doc_id"] for _, d in episodes.nodes(data=True)} == documents
    else:
        edges_file = out / f"{sample_workspace.root.name}.interactions.edges.csv"
        edges = edges_file.read_text(encoding="utf-8").splitlines()
        assert len(edges) - 1 == len(pairs)


def test_a_build_variant_stays_outside_the_base_tables_glob(copied: Workspace):
    # An ablation variant links the base's files under `variants/<setting>/`: a recursive glob from the
    # root would count them twice, `tables/**/*.parquet` (and partitions.json) counts each row once.
    from flows.evaluation.ablation import link_base

    linked = link_base(copied, Workspace.at(copied.root / "variants" / "saber_raw"))
    assert linked > 0
    con = duckdb.connect()
    counted = run_query(copied, "SELECT count(*) AS n FROM entities").to_pylist()[0]["n"]
    base_glob = (copied.root / "tables" / "**" / "*.parquet").as_posix()
    everywhere = (copied.root / "**" / "*.parquet").as_posix()
    in_base = con.execute(
        f"SELECT count(*) FROM read_parquet('{base_glob}', filename = true, union_by_name = true) "
        "WHERE filename LIKE '%/entities/%'"
    ).fetchone()[0]
    doubled = con.execute(
        f"SELECT count(*) FROM read_parquet('{everywhere}', filename = true, union_by_name = true) "
        "WHERE filename LIKE '%/entities/%'"
    ).fetchone()[0]
    assert in_base == counted and doubled == 2 * counted
