"""`nkw export`: the entity graph, the directed interaction graph and the episode DAG of one
document, or of every document of a workspace, as GraphML, GEXF or CSV (networkx writers), for
Gephi, Cytoscape, networkx and spreadsheets. Each graph is one file (CSV: a node and an edge table);
a workspace export holds every document's graph side by side (ids are unique across documents;
every node carries its `doc_id`)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Iterable

import networkx as nx

from tasks.files import write_output
from tasks.views.bundle import Bundle, entity_graph, episode_dag, interaction_graph

FORMATS = ("graphml", "gexf", "csv")
GRAPHS = {"entities": entity_graph, "interactions": interaction_graph, "episodes": episode_dag}


def _csv(graph: nx.Graph, nodes_path: Path, edges_path: Path) -> None:
    node_keys = sorted({k for _, data in graph.nodes(data=True) for k in data})
    edge_keys = sorted({k for _, _, data in graph.edges(data=True) for k in data})
    nodes = [["id", *node_keys]]
    nodes += [[node, *(data.get(k, "") for k in node_keys)] for node, data in graph.nodes(data=True)]
    edges = [["source", "target", *edge_keys]]
    edges += [[s, t, *(data.get(k, "") for k in edge_keys)] for s, t, data in graph.edges(data=True)]
    for path, rows in ((nodes_path, nodes), (edges_path, edges)):
        buffer = io.StringIO(newline="")
        csv.writer(buffer).writerows(rows)
        write_output(path, buffer.getvalue())


def _networkx_file(graph: nx.Graph, fmt: str, path: Path) -> None:
    buffer = io.BytesIO()
    (nx.write_graphml if fmt == "graphml" else nx.write_gexf)(graph, buffer)
    write_output(path, buffer.getvalue())


def bundle_graphs(bundles: Iterable[Bundle], name: str | None = None) -> dict[str, nx.Graph]:
    """Each graph kind over the bundles: one document's graphs, or every document's side by side."""
    bundles = list(bundles)
    graphs: dict[str, nx.Graph] = {}
    for part, make in GRAPHS.items():
        per_document = [make(bundle) for bundle in bundles]
        if len(per_document) == 1:
            graphs[part] = per_document[0]
            continue
        merged = nx.DiGraph() if part != "entities" else nx.Graph()
        for graph in per_document:
            merged.update(graph)
        merged.graph["name"] = f"{name or 'workspace'} {part.rstrip('s')} graph"
        graphs[part] = merged
    return graphs


def write_graphs(graphs: dict[str, nx.Graph], fmt: str, out: Path) -> list[Path]:
    """Write the graphs next to `out` (its stem gets `.entities` / `.interactions` / `.episodes`)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    stem = out.with_suffix("") if out.suffix.lower() in (".graphml", ".gexf", ".csv") else out
    written: list[Path] = []
    for part, graph in graphs.items():
        if fmt == "csv":
            nodes, edges = Path(f"{stem}.{part}.nodes.csv"), Path(f"{stem}.{part}.edges.csv")
            _csv(graph, nodes, edges)
            written += [nodes, edges]
            continue
        path = Path(f"{stem}.{part}.{fmt}")
        _networkx_file(graph, fmt, path)  # written the safe way: never through a planted link
        written.append(path)
    return written


def export_graphs(bundle: Bundle, fmt: str, out: Path) -> list[Path]:
    """One document's graphs next to `out`; returns the files."""
    return write_graphs(bundle_graphs([bundle]), fmt, out)
