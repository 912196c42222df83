"""Closed-set relations between selected storylines (paper appendix A.1, Algorithm 2 last line):
enables, blocks, resolves, conflicts, parallels, prerequisite.

Offline the relation follows deterministic rules over the cleaned episode graph, in priority:
  prerequisite  a path from A's last episode to B's first, and every way into B's first episode comes from A
  enables       a path from A's last episode to B's first, or B branches off A (starts at one of A's episodes)
  resolves      B ends after A, shares its cast, A carries a conflict and B's last episode a resolution cue,
                and A reaches B
  blocks        a contrast edge between the two, its earlier episode carrying an obstruction cue
  conflicts     a contrast edge between episodes of the two (stronger with shared characters)
  parallels     no shared episodes, overlapping section spans (30% of the shorter), shared cast,
                no path either way
"Path" means at most MAX_HOPS kept edges: in a dense episode DAG almost every later episode is
reachable from an earlier one, so unbounded reachability would relate every pair. The same
structural signals choose which pairs the LLM is asked about.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.ids import make_id
from tasks.hierarchy.units import has_cue

MAX_HOPS = 2  # A's ending feeds B's start directly or through one intermediate episode
MIN_CAST_SHARE = 0.34  # Jaccard of the character sets: a protagonist in every arc is not enough


@dataclass(frozen=True)
class StorylineInfo:
    storyline_id: str
    label: str  # "S<ordinal>", how prompts refer to it
    episode_ids: tuple[str, ...]
    first: int  # first section ordinal
    last: int
    characters: frozenset[str]
    text: str  # name, description and the episodes' goals: where conflict cues are read


@dataclass(frozen=True)
class EpisodeGraph:
    """The cleaned progression graph plus the auxiliary contrast edges, with episode texts."""

    successors: Mapping[str, Sequence[tuple[str, float]]]  # kept progression edges with weight
    predecessors: Mapping[str, set[str]]
    contrasts: Sequence[tuple[str, str]]
    texts: Mapping[str, str]  # episode id -> title, summary and goal
    ordinal: Mapping[str, int]  # episode id -> ordinal


def reach_strength(graph: EpisodeGraph, start: str, goal: str, max_hops: int = MAX_HOPS) -> float | None:
    """Highest weakest-link weight over paths start ~> goal of at most `max_hops` edges
    (1.0 when start == goal), or None when there is no such path."""
    if start == goal:
        return 1.0
    best: float | None = None
    frontier = {start: 1.0}
    for _ in range(max_hops):
        reached: dict[str, float] = {}
        for node, low in frontier.items():
            for nxt, weight in graph.successors.get(node, ()):
                strength = min(low, weight)
                if nxt == goal:
                    best = strength if best is None else max(best, strength)
                elif strength > reached.get(nxt, -1.0):
                    reached[nxt] = strength
        frontier = reached
    return best


def _reaches_any(graph: EpisodeGraph, sources: Sequence[str], targets: set[str]) -> bool:
    seen, queue = set(sources), deque(sources)
    while queue:
        for nxt, _ in graph.successors.get(queue.popleft(), ()):
            if nxt in targets:
                return True
            if nxt not in seen:
                seen.add(nxt)
                queue.append(nxt)
    return False


Relation = tuple[
    str, str, str, float, str
]  # type, source storyline id, target storyline id, confidence, reason


def _path_relation(a: StorylineInfo, b: StorylineInfo, graph: EpisodeGraph) -> Relation | None:
    if b.episode_ids[0] in a.episode_ids[:-1]:  # a trunk and one of its branches
        return (
            "enables",
            a.storyline_id,
            b.storyline_id,
            0.7,
            f"{b.label} branches off {a.label}: it starts from one of {a.label}'s episodes",
        )
    strength = reach_strength(graph, a.episode_ids[-1], b.episode_ids[0])
    if strength is None:
        return None
    ways_in = graph.predecessors.get(b.episode_ids[0], set())
    if a.episode_ids[-1] == b.episode_ids[0] or (ways_in and ways_in <= set(a.episode_ids)):
        return (
            "prerequisite",
            a.storyline_id,
            b.storyline_id,
            round(0.6 + 0.3 * strength, 4),
            f"{b.label} can only start from {a.label}: its first episode is reached through {a.label} alone",
        )
    return (
        "enables",
        a.storyline_id,
        b.storyline_id,
        round(0.45 + 0.3 * strength, 4),
        f"a path of kept episode relations leads from the end of {a.label} to the start of {b.label}",
    )


def _contrast(a: StorylineInfo, b: StorylineInfo, graph: EpisodeGraph) -> Relation | None:
    in_a, in_b = set(a.episode_ids), set(b.episode_ids)
    edges = [(x, y) for x, y in graph.contrasts if (x in in_a and y in in_b) or (x in in_b and y in in_a)]
    if not edges:
        return None
    for x, y in sorted(edges):
        earlier = min((x, y), key=lambda e: (graph.ordinal.get(e, 0), e))
        if has_cue(graph.texts.get(earlier, ""), "obstruction"):
            source, target = (a, b) if earlier in in_a else (b, a)
            return (
                "blocks",
                source.storyline_id,
                target.storyline_id,
                0.55,
                f"an episode of {source.label} obstructs a contrasting episode of {target.label}",
            )
    shared = bool(a.characters & b.characters)
    return (
        "conflicts",
        a.storyline_id,
        b.storyline_id,
        0.6 if shared else 0.45,
        f"contrast edges link episodes of {a.label} and {b.label}"
        + (" with shared characters" if shared else ""),
    )


def cast_share(a: StorylineInfo, b: StorylineInfo) -> float:
    """Jaccard similarity of the two storylines' character sets."""
    union = a.characters | b.characters
    return len(a.characters & b.characters) / len(union) if union else 0.0


def relate_pair(a: StorylineInfo, b: StorylineInfo, graph: EpisodeGraph) -> Relation | None:
    """The offline relation of a pair of storylines (a starts no later than b), or None."""
    found = _path_relation(a, b, graph) or _path_relation(b, a, graph)
    if found is not None:
        return found
    shared = cast_share(a, b) >= MIN_CAST_SHARE
    if (
        shared
        and b.last > a.last
        and has_cue(a.text, "conflict")
        and b.episode_ids
        and has_cue(graph.texts.get(b.episode_ids[-1], ""), "resolution")
        and _reaches_any(graph, a.episode_ids, set(b.episode_ids))
    ):
        return (
            "resolves",
            b.storyline_id,
            a.storyline_id,
            0.5,
            f"{b.label} ends after {a.label} with a resolution involving the same characters",
        )
    found = _contrast(a, b, graph)
    if found is not None:
        return found
    overlap = min(a.last, b.last) - max(a.first, b.first) + 1
    share = overlap / max(1, min(a.last - a.first + 1, b.last - b.first + 1))
    if shared and share >= 0.3 and not set(a.episode_ids) & set(b.episode_ids):
        return (
            "parallels",
            a.storyline_id,
            b.storyline_id,
            round(0.4 + 0.3 * share, 4),
            f"{a.label} and {b.label} run over the same sections with a shared cast and no path between them",
        )
    return None


def ordered_pairs(infos: Sequence[StorylineInfo]) -> list[tuple[StorylineInfo, StorylineInfo]]:
    """Every unordered pair once, earlier-starting storyline first (at most max_storylines² / 2)."""
    ranked = sorted(infos, key=lambda s: (s.first, s.label))
    return [(a, b) for i, a in enumerate(ranked) for b in ranked[i + 1 :]]


def offline_relations(
    doc_id: str, infos: Sequence[StorylineInfo], graph: EpisodeGraph
) -> list[dict[str, Any]]:
    """`storyline_relations` rows from the rules above."""
    rows = [
        relation_row(doc_id, rel, "heuristic")
        for a, b in ordered_pairs(infos)
        if (rel := relate_pair(a, b, graph)) is not None
    ]
    return sorted(rows, key=lambda r: r["relation_id"])


def pair_hints(
    a: StorylineInfo, b: StorylineInfo, graph: EpisodeGraph, names: Mapping[str, str]
) -> list[str]:
    """Structural facts about a pair for the LLM; an empty list means the pair is not worth asking."""
    hints = []
    if reach_strength(graph, a.episode_ids[-1], b.episode_ids[0]) is not None:
        hints.append(f"the end of {a.label} leads to the start of {b.label}")
    if reach_strength(graph, b.episode_ids[-1], a.episode_ids[0]) is not None:
        hints.append(f"the end of {b.label} leads to the start of {a.label}")
    shared = sorted(names.get(c, c) for c in a.characters & b.characters)
    if shared:
        hints.append("shared characters: " + ", ".join(shared[:6]))
    in_a, in_b = set(a.episode_ids), set(b.episode_ids)
    if any((x in in_a and y in in_b) or (x in in_b and y in in_a) for x, y in graph.contrasts):
        hints.append("some of their episodes contrast")
    if min(a.last, b.last) >= max(a.first, b.first):
        hints.append("their section spans overlap")
    return hints


def relation_row(doc_id: str, relation: Relation, method: str) -> dict[str, Any]:
    """One `storyline_relations` row."""
    relation_type, source, target, confidence, reason = relation
    return {
        "relation_id": make_id("slr", doc_id, source, target, relation_type),
        "doc_id": doc_id,
        "source_storyline_id": source,
        "target_storyline_id": target,
        "relation_type": relation_type,
        "confidence": float(confidence),
        "reason": reason,
        "method": method,
    }
