"""What the HTML view shows, as one JSON-ready dict built from a document's bundle: scenes and
characters of the swimlane with presence and states, final continuity chains with their cues,
the storyline DAG (episodes placed by order and storyline lane) and the entity graph (starting
positions from a seeded spring layout, which the page's force layout refines from, so the page is
the same on every render; entities without relations are flagged to be grouped apart)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import networkx as nx

from tasks.tables.io import as_list
from tasks.views.bundle import Bundle, entity_graph, episode_dag

MAX_FACTS = 12
SUMMARY_CHARS = 180


def _summary(section: dict[str, Any], occasions: dict[str, str]) -> str:
    if section["section_id"] in occasions:
        return occasions[section["section_id"]]
    lines = [line.strip() for line in str(section["text"] or "").splitlines()[1:] if line.strip()]
    return (lines[0] if lines else "")[:SUMMARY_CHARS]


def swimlane(bundle: Bundle) -> dict[str, Any]:
    sections = bundle["sections"].sort_values("ordinal")
    scenes_frame = sections[sections["section_kind"] == "scene"]
    if scenes_frame.empty:
        scenes_frame = sections[sections["section_kind"] != "preamble"]
    occasions: dict[str, str] = {}
    for row in bundle["occasions"].to_dict("records"):
        ids = as_list(row["section_ids"])
        if row["occasion_type"] == "scene" and len(ids) == 1:
            occasions.setdefault(ids[0], str(row["description"]))
    scenes = [
        {"id": r["section_id"], "n": i + 1, "heading": str(r["heading"]), "summary": _summary(r, occasions)}
        for i, r in enumerate(scenes_frame.to_dict("records"))
    ]
    order = {s["id"]: s["n"] for s in scenes}
    entities = bundle["entities"]
    characters = {
        r["entity_id"]: str(r["name"])
        for r in entities.to_dict("records")
        if r["entity_type"] == "character" and not r["is_proxy"]
    }
    cells: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for row in bundle["mentions"].itertuples(index=False):
        if row.entity_id in characters and row.section_id in order:
            cells[row.entity_id].setdefault(row.section_id, [])
    states = bundle["character_states"]
    for row in states.sort_values(["char_start", "state_id"]).itertuples(index=False) if len(states) else ():
        if row.entity_id in characters and row.section_id in order:
            cells[row.entity_id][row.section_id].append(f"[{row.state_kind}] {row.state}")
    rows = [
        {"id": e, "name": characters[e], "first": min(order[s] for s in cells[e]), "count": len(cells[e])}
        for e in cells
    ]
    rows.sort(key=lambda r: (r["first"], -r["count"], r["name"]))
    return {
        "scenes": scenes,
        "characters": rows,
        "cells": {e: {s: v for s, v in by_scene.items()} for e, by_scene in cells.items()},
    }


def chains(bundle: Bundle) -> list[dict[str, Any]]:
    frame = bundle["continuity_chains"]
    if frame.empty:
        return []
    finals = frame[frame["kind"] == "final"].sort_values("ordinal")
    return [
        {
            "id": r["chain_id"],
            "scenes": as_list(r["section_ids"]),
            "decision": r["decision"],
            "coherence": r["coherence_score"],
            "rationale": r["rationale"] or "",
            "method": r["method"],
            "cues": [dict(c, spans=as_list(c["spans"])) for c in as_list(r["cues"])],
        }
        for r in finals.to_dict("records")
    ]


def storyline_dag(bundle: Bundle) -> dict[str, Any]:
    dag = episode_dag(bundle)
    storylines = (
        bundle["storylines"].sort_values("ordinal").to_dict("records") if len(bundle["storylines"]) else []
    )
    lane: dict[str, int] = {}
    for i, row in enumerate(storylines):
        for episode_id in as_list(row["episode_ids"]):
            lane.setdefault(episode_id, i)
    episodes = [
        {
            "id": n,
            "title": d["label"],
            "summary": d["summary"][:SUMMARY_CHARS],
            "x": d["ordinal"],
            "lane": lane.get(n, len(storylines)),
            "scenes": f"{d['first_ordinal']}-{d['last_ordinal']}",
        }
        for n, d in sorted(dag.nodes(data=True), key=lambda item: item[1]["ordinal"])
    ]
    edges = [{"s": s, "t": t, "type": d["relation_type"]} for s, t, d in dag.edges(data=True)]
    lines = [
        {
            "name": r["name"],
            "origin": r["origin"] or "",
            "episodes": as_list(r["episode_ids"]),
            "description": str(r["description"] or "")[:SUMMARY_CHARS],
        }
        for r in storylines
    ]
    return {"episodes": episodes, "edges": edges, "storylines": lines}


def layout(graph: nx.Graph) -> dict[str, tuple[float, float]]:
    """Positions in [-1, 1]: a seeded spring layout of the linked entities, isolated ones in rows below."""
    linked = [n for n in graph.nodes if graph.degree(n) > 0]
    alone = sorted((n for n in graph.nodes if graph.degree(n) == 0), key=lambda n: graph.nodes[n]["label"])
    positions: dict[str, tuple[float, float]] = {}
    if linked:
        sub = graph.subgraph(linked)
        spring = nx.spring_layout(sub, seed=7, k=2.0 / max(1.0, len(linked) ** 0.5), iterations=100)
        top = 0.75 if alone else 1.0
        positions.update({n: (float(x), float(-1 + (y + 1) * (top + 1) / 2)) for n, (x, y) in spring.items()})
    per_row = 12
    for i, node in enumerate(alone):
        row, column = divmod(i, per_row)
        positions[node] = (-1 + 2 * (column + 0.5) / per_row, 0.85 + 0.1 * row)
    return positions


def entity_view(bundle: Bundle) -> dict[str, Any]:
    graph = entity_graph(bundle)
    positions = layout(graph)
    facts: dict[str, list[str]] = defaultdict(list)
    frame = bundle["atomic_facts"]
    for row in frame.sort_values(["entity_id", "char_start"]).itertuples(index=False) if len(frame) else ():
        if len(facts[row.entity_id]) < MAX_FACTS:
            facts[row.entity_id].append(str(row.text))
    nodes = [
        {
            "id": n,
            "name": d["label"],
            "type": d["entity_type"],
            "degree": d["degree"],
            "links": graph.degree(n),
            "mentions": d["n_mentions"],
            "profile": d["profile"],
            "facts": facts.get(n, []),
            "x": round(float(positions[n][0]), 4),
            "y": round(float(positions[n][1]), 4),
        }
        for n, d in graph.nodes(data=True)
    ]
    edges = [
        {"s": s, "t": t, "description": str(d.get("description", ""))[:SUMMARY_CHARS]}
        for s, t, d in graph.edges(data=True)
    ]
    return {"nodes": nodes, "edges": edges}


def page_data(bundle: Bundle) -> dict[str, Any]:
    counts = bundle["continuity_counts"]
    documents = bundle["documents"]
    return {
        "doc_id": bundle.doc_id,
        "title": bundle.title,
        "kind": str(documents.iloc[0]["kind"]) if len(documents) else "",
        "swimlane": swimlane(bundle),
        "chains": chains(bundle),
        "counts": counts.iloc[0].to_dict() if len(counts) else {},
        "dag": storyline_dag(bundle),
        "graph": entity_view(bundle),
    }
