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


def text_similarity(
    a: Counter, b: Counter, norm_a: float | None = None, norm_b: float | None = None
) -> float:
    """Cosine of two term-count vectors (0 when either is empty); the norms may be given (a scene is
    compared with many others)."""
    if not a or not b:
        return 0.0
    small, large = (a, b) if len(a) <= len(b) else (b, a)
    dot = sum(count * large[term] for term, count in small.items() if term in large)  # integers: exact
    norm = (norm_a if norm_a is not None else _norm(a)) * (norm_b if norm_b is not None else _norm(b))
    return round(dot / norm, 4) if norm else 0.0


def _norm(counts: Counter) -> float:
    return math.sqrt(sum(v * v for v in counts.values()))


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


def pairs_sharing_any(graph: SceneGraph) -> int:
    """How many scene pairs share at least one entity (hubs included), from one bit mask of scenes
    per entity: the pairs of a hub in most scenes are never listed."""
    scenes_of: dict[str, int] = defaultdict(int)
    for scene in graph.scenes:
        for entity_id in scene.linked:
            scenes_of[entity_id] |= 1 << scene.index
    total = 0
    for scene in graph.scenes:
        partners = 0
        for entity_id in scene.linked:
            partners |= scenes_of[entity_id]
        total += (partners >> (scene.index + 1)).bit_count()  # later scenes only: each pair once
    return total


def candidate_rows(
    graph: SceneGraph, language: str, settings: ContinuitySettings
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Candidate rows (script order) and the document's counts row."""
    hubs = hub_entities(graph, settings.max_entity_share)
    shared = entity_pairs(graph, hubs)
    terms = {s.index: Counter(index_terms(s.text, language)) for s in graph.scenes}
    norms = {index: _norm(counts) for index, counts in terms.items()}
    linked = {s.index: s.linked for s in graph.scenes}
    # Each entity's order key and type, once: a long screenplay has thousands of candidate pairs.
    order = {e: (graph.kind(e), graph.name(e), e) for scene in graph.scenes for e in scene.linked}
    rows: list[dict[str, Any]] = []
    for (a, b), entity_ids in sorted(shared.items()):
        if settings.max_distance and b - a > settings.max_distance:
            continue
        similarity = text_similarity(terms[a], terms[b], norms[a], norms[b])
        if similarity < settings.min_similarity:
            continue
        left, right = graph.scenes[a], graph.scenes[b]
        # The hubs the two scenes also share are listed too: they are shared, just not decisive.
        entity_ids = entity_ids | ((linked[a] & linked[b]) & hubs)
        ordered = sorted(entity_ids, key=order.__getitem__)
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
                "shared_types": sorted({order[e][0] for e in ordered}),
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
        "entity_pairs": pairs_sharing_any(graph) if hubs else len(shared),
        "hub_entities": len(hubs),
        "candidates": len(rows),
        "max_entity_share": settings.max_entity_share,
        "max_distance": settings.max_distance or None,
        "min_similarity": settings.min_similarity,
    }
    return rows, counts
