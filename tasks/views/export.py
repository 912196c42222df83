"""`nkw export`: the entity graph and the episode DAG of one document as GraphML, GEXF or CSV
(networkx writers), for Gephi, Cytoscape, networkx and spreadsheets. GraphML and GEXF hold
both graphs in one file each per graph; CSV writes node and edge tables per graph."""

from __future__ import annotations

import csv
from pathlib import Path

import networkx as nx

from tasks.views.bundle import Bundle, entity_graph, episode_dag

FORMATS = ("graphml", "gexf", "csv")


def _csv(graph: nx.Graph, nodes_path: Path, edges_path: Path) -> None:
    node_keys = sorted({k for _, data in graph.nodes(data=True) for k in data})
    edge_keys = sorted({k for _, _, data in graph.edges(data=True) for k in data})
    with open(nodes_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", *node_keys])
        for node, data in graph.nodes(data=True):
            writer.writerow([node, *(data.get(k, "") for k in node_keys)])
    with open(edges_path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["source", "target", *edge_keys])
        for source, target, data in graph.edges(data=True):
            writer.writerow([source, target, *(data.get(k, "") for k in edge_keys)])


def export_graphs(bundle: Bundle, fmt: str, out: Path) -> list[Path]:
    """Write the two graphs next to `out` (its stem gets `.entities` / `.episodes`); returns the files."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats: {', '.join(FORMATS)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    stem = out.with_suffix("") if out.suffix.lower() in (".graphml", ".gexf", ".csv") else out
    written: list[Path] = []
    for part, graph in (("entities", entity_graph(bundle)), ("episodes", episode_dag(bundle))):
        if fmt == "csv":
            nodes, edges = Path(f"{stem}.{part}.nodes.csv"), Path(f"{stem}.{part}.edges.csv")
            _csv(graph, nodes, edges)
            written += [nodes, edges]
            continue
        path = Path(f"{stem}.{part}.{fmt}")
        if fmt == "graphml":
            nx.write_graphml(graph, path)
        else:
            nx.write_gexf(graph, path)
        written.append(path)
    return written
