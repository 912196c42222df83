"""What the HTML view shows, as one JSON-ready dict built from a document's bundle: scenes and
characters of the swimlane with presence and states, final continuity chains with their cues,
the storyline DAG (episodes with their storyline, the kept relations, and which of them the page's
layered layout ranks by), the work and storyline summaries sentence by sentence with their scenes, and
the entity graph (entities and relations; the page lays it out). Texts shown in full on hover are
shortened at a word break, never inside a word; summary sentences are shown whole."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import Any

import networkx as nx
import pandas as pd

from tasks.tables.io import as_list
from tasks.views.bundle import Bundle, entity_graph, episode_dag

MAX_FACTS = 12
SUMMARY_CHARS = 180


def shorten(text: str, limit: int = SUMMARY_CHARS) -> str:
    """At most `limit` characters, cut at the last word break before it, with an ellipsis (inside a
    word only when its second half has no break, as in Chinese text)."""
    text = " ".join(str(text or "").split())
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = head.rfind(" ")
    return (head[:cut] if cut > limit // 2 else head).rstrip(" ,;:") + "\u2026"


def _summary(section: dict[str, Any], occasions: dict[str, str]) -> str:
    if section["section_id"] in occasions:
        return shorten(occasions[section["section_id"]])
    lines = [line.strip() for line in str(section["text"] or "").splitlines()[1:] if line.strip()]
    return shorten(lines[0] if lines else "")


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


def layout_edges(dag: nx.DiGraph, order: list[str]) -> list[tuple[str, str]]:
    """The edges the page's layered layout ranks by: the DAG's transitive reduction (a relation
    implied by a longer path would stretch every layer it spans without placing anything), and for
    an episode no relation touches, an edge from the episode before it in story order, so it sits
    where the story has it rather than all such episodes stacked in the first layer."""
    edges = (
        list(nx.transitive_reduction(dag).edges()) if nx.is_directed_acyclic_graph(dag) else list(dag.edges())
    )
    for before, episode in zip(order, order[1:]):
        if dag.degree(episode) == 0:
            edges.append((before, episode))
    return edges


def _storylines(bundle: Bundle) -> list[dict[str, Any]]:
    """Storylines in their order: the DAG's colours and the summaries' links both index this list."""
    frame = bundle["storylines"]
    return frame.sort_values(["ordinal", "storyline_id"]).to_dict("records") if len(frame) else []


def storyline_dag(bundle: Bundle) -> dict[str, Any]:
    dag = episode_dag(bundle)
    storylines = _storylines(bundle)
    lane: dict[str, int] = {}
    for i, row in enumerate(storylines):
        for episode_id in as_list(row["episode_ids"]):
            lane.setdefault(episode_id, i)
    ordered = sorted(dag.nodes(data=True), key=lambda item: (item[1]["ordinal"], item[0]))
    episodes = [
        {
            "id": n,
            "title": d["label"],
            "summary": shorten(d["summary"]),
            "ordinal": d["ordinal"],
            "lane": lane.get(n, len(storylines)),
            "scenes": f"{d['first_ordinal']}-{d['last_ordinal']}",
        }
        for n, d in ordered
    ]
    ranked = set(layout_edges(dag, [n for n, _ in ordered]))
    edges = [
        {"s": s, "t": t, "type": d["relation_type"], "layout": (s, t) in ranked}
        for s, t, d in dag.edges(data=True)
    ]
    order = [{"s": s, "t": t} for s, t in sorted(ranked - set(dag.edges()))]
    lines = [
        {
            "name": r["name"],
            "origin": r["origin"] or "",
            "episodes": as_list(r["episode_ids"]),
            "description": shorten(str(r["description"] or "")),
        }
        for r in storylines
    ]
    return {"episodes": episodes, "edges": edges, "order": order, "storylines": lines}


def _sentences(part: pd.DataFrame, scenes: Callable[[dict[str, Any]], list[str]]) -> list[dict[str, Any]]:
    return [
        {"text": " ".join(str(r["text"]).split()), "scenes": list(dict.fromkeys(scenes(r)))}
        for r in part.sort_values("position").to_dict("records")
    ]


def summary_sentences(quotes: pd.DataFrame, claims: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Each summary's sentences in order, each with the sections it rests on: the sentences a model
    wrote (summary_claims; one may rest on quotes of several scenes) where the summary has them,
    else its quotes (summary_quotes; each from one scene)."""
    out = {
        summary_id: _sentences(part, lambda r: as_list(r["section_ids"]))
        for summary_id, part in (claims.groupby("summary_id") if len(claims) else ())
    }
    for summary_id, part in quotes.groupby("summary_id") if len(quotes) else ():
        out.setdefault(summary_id, _sentences(part, lambda r: [r["section_id"]]))
    return out


def summaries(bundle: Bundle) -> dict[str, Any] | None:
    """The work summary and the storyline summaries (story order; `storyline` indexes the DAG's
    storylines, for its colour and its chain), or None when the bundle has neither."""
    frame = bundle["summaries"]
    shown = frame[frame["level"].isin(("work", "storyline"))] if len(frame) else frame
    if shown.empty:
        return None
    rows = shown.sort_values(["ordinal", "summary_id"]).to_dict("records")
    sentences = summary_sentences(bundle["summary_quotes"], bundle["summary_claims"])
    lanes = {row["storyline_id"]: i for i, row in enumerate(_storylines(bundle))}

    def item(row: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": row["summary_id"],
            "title": str(row["title"]),
            "origin": row["origin"] if isinstance(row["origin"], str) else "",
            "method": str(row["method"]),
            "storyline": lanes.get(row["subject_id"]),
            "sentences": sentences.get(row["summary_id"], []),
        }

    work = [item(r) for r in rows if r["level"] == "work"]
    return {
        "work": work[0] if work else None,
        "storylines": [item(r) for r in rows if r["level"] == "storyline"],
    }


def entity_view(bundle: Bundle) -> dict[str, Any]:
    graph = entity_graph(bundle)
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
        }
        for n, d in sorted(graph.nodes(data=True))
    ]
    edges = [
        {"s": s, "t": t, "description": shorten(str(d.get("description", "")))}
        for s, t, d in sorted(graph.edges(data=True), key=lambda e: (e[0], e[1]))
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
        "summaries": summaries(bundle),
        "graph": entity_view(bundle),
    }
