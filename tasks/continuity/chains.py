"""Continuity chains (paper appendix D.1): the continuity graph over scenes from positive
judgments, preliminary chains as connected components or maximal cliques, the chain critic's
verdict (LLM prompt, or an offline critic over the judged edges), and the final chains: kept
or split chains whose scenes all ground at least one shared character, location or object."""

from __future__ import annotations

from typing import Any, Iterable

import networkx as nx

from schemas.ids import make_id
from tasks.continuity.scenes import SceneGraph, shared_cues


def continuity_graph(judgments: Iterable[dict[str, Any]], min_confidence: float) -> nx.Graph:
    """Scenes joined by judgments that say continuity at or above `min_confidence`."""
    graph = nx.Graph()
    for j in judgments:
        if j["is_continuity"] and float(j["confidence"]) >= min_confidence:
            graph.add_edge(
                j["scene_a"], j["scene_b"], judgment_id=j["judgment_id"], confidence=float(j["confidence"])
            )
    return graph


def preliminary_groups(graph: nx.Graph, scenes: SceneGraph, how: str) -> list[list[str]]:
    """Scene groups of two or more, each in script order, the groups ordered by their first scene."""
    index = {s.section_id: s.index for s in scenes.scenes}
    if how == "cliques":
        groups = [set(c) for c in nx.find_cliques(graph)]
    else:
        groups = [set(c) for c in nx.connected_components(graph)]
    ordered = [sorted(g, key=index.__getitem__) for g in groups if len(g) >= 2]
    return sorted(ordered, key=lambda g: [index[s] for s in g])


def chain_judgments(section_ids: list[str], judgments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every judgment (positive or not) between two scenes of the chain."""
    members = set(section_ids)
    return [j for j in judgments if j["scene_a"] in members and j["scene_b"] in members]


def weak_neighbours(section_ids: list[str], graph: nx.Graph) -> list[tuple[str, str]]:
    """Neighbouring scenes of the chain (script order) without a direct positive edge."""
    return [(a, b) for a, b in zip(section_ids, section_ids[1:]) if not graph.has_edge(a, b)]


def offline_critique(scenes: SceneGraph, section_ids: list[str], graph: nx.Graph) -> dict[str, Any]:
    """The chain critic offline: coherence is the share of neighbouring pairs with a direct edge;
    split at weak neighbours or when no cue is shared by every scene, drop when nothing holds."""
    weak = weak_neighbours(section_ids, graph)
    pairs = max(1, len(section_ids) - 1)
    coherence = round(1 - len(weak) / pairs, 3)
    shared, _ = shared_cues(scenes, section_ids)
    edges = [
        graph.edges[a, b]["confidence"] for a, b in zip(section_ids, section_ids[1:]) if graph.has_edge(a, b)
    ]
    if coherence == 0:
        decision, rationale = "drop", "no neighbouring scenes have a direct continuity edge"
    elif weak or not shared:
        decision = "split"
        rationale = (
            f"{len(weak)} neighbouring pair(s) lack a direct edge"
            if weak
            else "no character, location or object is grounded in every scene"
        )
    else:
        decision = "keep"
        rationale = f"every neighbouring pair is judged continuous; all scenes share {scenes.name(shared[0])}"
    return {
        "coherence_score": coherence,
        "confidence": round(sum(edges) / len(edges), 3) if edges else 0.0,
        "decision": decision,
        "weak_edges": weak,
        "suggested_splits": [],
        "rationale": rationale,
    }


def split_groups(section_ids: list[str], critique: dict[str, Any]) -> list[list[str]]:
    """The groups a verdict leaves: none (drop), the chain (keep), or its splits."""
    if critique["decision"] == "drop":
        return []
    if critique["decision"] == "keep":
        return [section_ids]
    members = set(section_ids)
    suggested = [[s for s in dict.fromkeys(group) if s in members] for group in critique["suggested_splits"]]
    suggested = [g for g in suggested if len(g) >= 2]
    if suggested:
        order = {s: i for i, s in enumerate(section_ids)}
        return [sorted(g, key=order.__getitem__) for g in suggested]
    weak = set(map(tuple, critique["weak_edges"]))
    groups, current = [], [section_ids[0]]
    for a, b in zip(section_ids, section_ids[1:]):
        if (a, b) in weak or (b, a) in weak:
            groups.append(current)
            current = []
        current.append(b)
    return groups + [current]


def grounded_runs(scenes: SceneGraph, section_ids: list[str]) -> list[list[str]]:
    """Consecutive runs (in chain order) whose scenes all ground a shared entity; runs of two or more."""
    runs: list[list[str]] = []
    current: list[str] = []
    for section_id in section_ids:
        if current and shared_cues(scenes, current + [section_id])[0]:
            current.append(section_id)
            continue
        if len(current) >= 2:
            runs.append(current)
        current = [section_id]
    if len(current) >= 2:
        runs.append(current)
    return runs


def chain_row(
    scenes: SceneGraph,
    kind: str,
    ordinal: int,
    section_ids: list[str],
    judgments: list[dict[str, Any]],
    critique: dict[str, Any],
    method: str,
    preliminary_id: str | None,
) -> dict[str, Any]:
    shared, cues = shared_cues(scenes, section_ids)
    return {
        "chain_id": make_id("chain", scenes.doc_id, kind, *section_ids),
        "doc_id": scenes.doc_id,
        "kind": kind,
        "ordinal": ordinal,
        "section_ids": list(section_ids),
        "shared_entity_ids": shared,
        "cues": cues,
        "judgment_ids": [j["judgment_id"] for j in chain_judgments(section_ids, judgments)],
        "decision": critique["decision"],
        "coherence_score": critique["coherence_score"],
        "confidence": critique["confidence"],
        "weak_edges": [f"{a}|{b}" for a, b in critique["weak_edges"]],
        "rationale": critique["rationale"],
        "preliminary_id": preliminary_id,
        "method": method,
    }


def final_chains(
    scenes: SceneGraph,
    preliminary: list[dict[str, Any]],
    critiques: dict[str, dict[str, Any]],
    judgments: list[dict[str, Any]],
) -> list[dict[str, Any]]:
    """Final chains from the critiqued preliminary ones; every final chain shares a grounded cue."""
    rows: list[dict[str, Any]] = []
    seen: set[tuple[str, ...]] = set()
    for chain in preliminary:
        critique = critiques.get(chain["chain_id"])
        if critique is None:
            continue  # its critic request failed: a failures row says so
        for group in split_groups(chain["section_ids"], critique):
            for run in grounded_runs(scenes, group):
                if tuple(run) in seen:
                    continue
                seen.add(tuple(run))
                verdict = {
                    **critique,
                    "decision": "keep" if run == chain["section_ids"] else critique["decision"],
                }
                if verdict["decision"] == "drop":
                    continue
                rows.append(
                    chain_row(
                        scenes,
                        "final",
                        len(rows),
                        run,
                        judgments,
                        verdict,
                        chain["method"],
                        chain["chain_id"],
                    )
                )
    return rows
