"""Candidate scene pairs from the scene-entity graph (paper appendix D.1): two scenes are a
candidate only if they share a canonical character, location or object, grounded in both or
linked to them by an occasion. A hub (a character or object in most scenes, such as the lead)
does not qualify a pair on its own. Optional priors tighten the set further: script-order
distance k and the similarity of the two scenes' texts. The all-pairs count, the pairs sharing
any entity and the candidate count are recorded per document."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import combinations
from typing import Any

from schemas.config import ContinuitySettings
from schemas.ids import make_id
from tasks.continuity.scenes import SceneGraph
from tasks.text import index_terms


def text_similarity(a: Counter, b: Counter) -> float:
    """Cosine of two term-count vectors (0 when either is empty)."""
    if not a or not b:
        return 0.0
    dot = sum(count * b[term] for term, count in a.items() if term in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return round(dot / norm, 4) if norm else 0.0


def hub_entities(graph: SceneGraph, max_share: float) -> set[str]:
    """Characters and objects linked to more than `max_share` of the scenes (0: none). A lead who is in
    most scenes says nothing about a shared setup, so a hub alone never makes a pair a candidate;
    locations always count."""
    if not max_share or not graph.scenes:
        return set()
    share = Counter(e for scene in graph.scenes for e in scene.linked)
    return {e for e, n in share.items() if graph.kind(e) != "location" and n > max_share * len(graph.scenes)}


def entity_pairs(graph: SceneGraph, skip: set[str] = frozenset()) -> dict[tuple[int, int], set[str]]:
    """(scene index a < b) -> entities the two scenes share (not counting `skip`), via an inverted index."""
    scenes_of: dict[str, list[int]] = defaultdict(list)
    for scene in graph.scenes:
        for entity_id in scene.linked - skip:
            scenes_of[entity_id].append(scene.index)
    shared: dict[tuple[int, int], set[str]] = defaultdict(set)
    for entity_id, indices in scenes_of.items():
        for a, b in combinations(sorted(indices), 2):
            shared[(a, b)].add(entity_id)
    return shared


def candidate_rows(
    graph: SceneGraph, language: str, settings: ContinuitySettings
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Candidate rows (script order) and the document's counts row."""
    hubs = hub_entities(graph, settings.max_entity_share)
    shared = entity_pairs(graph, hubs)
    terms = {s.index: Counter(index_terms(s.text, language)) for s in graph.scenes}
    rows: list[dict[str, Any]] = []
    for (a, b), entity_ids in sorted(shared.items()):
        if settings.max_distance and b - a > settings.max_distance:
            continue
        similarity = text_similarity(terms[a], terms[b])
        if similarity < settings.min_similarity:
            continue
        left, right = graph.scenes[a], graph.scenes[b]
        # The hubs the two scenes also share are listed too: they are shared, just not decisive.
        entity_ids = entity_ids | ((left.linked & right.linked) & hubs)
        ordered = sorted(entity_ids, key=lambda e: (graph.kind(e), graph.name(e), e))
        # The occasions that link a shared entity to a scene where no mention grounds it.
        occasions = sorted(
            {
                o
                for e in ordered
                for scene in (left, right)
                if e not in scene.grounded
                for o in scene.via_occasion.get(e, [])
            }
        )
        rows.append(
            {
                "candidate_id": make_id("ccand", graph.doc_id, left.section_id, right.section_id),
                "doc_id": graph.doc_id,
                "scene_a": left.section_id,
                "scene_b": right.section_id,
                "ordinal_a": left.ordinal,
                "ordinal_b": right.ordinal,
                "shared_entity_ids": ordered,
                "shared_types": sorted({graph.kind(e) for e in ordered}),
                "via_occasion_ids": occasions,
                "distance": b - a,
                "similarity": similarity,
            }
        )
    n = len(graph.scenes)
    counts = {
        "doc_id": graph.doc_id,
        "n_scenes": n,
        "all_pairs": n * (n - 1) // 2,
        "entity_pairs": len(entity_pairs(graph)) if hubs else len(shared),
        "hub_entities": len(hubs),
        "candidates": len(rows),
        "max_entity_share": settings.max_entity_share,
        "max_distance": settings.max_distance or None,
        "min_similarity": settings.min_similarity,
    }
    return rows, counts
