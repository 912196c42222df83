"""Entity canonicalization decisions (one `Decision` per pair, by a rule or the LLM), in order,
and their replay (paper §3.1.3).

`resolve_decisions` orders decisions into steps so that a merge never joins two entities an
earlier decision kept apart; `apply_merge_decisions` replays the 'merge' steps (union-find),
so removing one decision from the log restores the two entities it joined.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Iterable

import pandas as pd


@dataclass(frozen=True)
class Decision:
    """One decision on a candidate pair of raw entities, as a `merge_decisions` row records it."""

    left: str
    right: str
    decision: str  # merge | separate
    method: str
    score: float
    reason: str


# Decision order: constraints first, then merges from the surest rule to the weakest.
METHOD_PRIORITY = {
    "rule:cue_fullname": 0,
    "rule:surname_title": 1,
    "rule:zh_given_name": 1,
    "rule:surname_unique": 2,
    "rule:title_first_name": 2,
    "rule:title_variant": 2,
    "rule:zh_role_owner": 2,
    "rule:zh_familiar_surname": 3,
    "rule:name_similarity": 4,
    "rule:name_containment": 4,
    "rule:name_prefix": 5,
    "llm": 6,
}


def resolve_decisions(decisions: Iterable[Decision]) -> list[Decision]:
    """Decisions in step order: every 'separate' first, then merges by rule priority; a merge
    that would join two entities already kept apart is turned into a 'separate'."""
    separates = sorted((d for d in decisions if d.decision == "separate"), key=lambda d: (d.left, d.right))
    merges = sorted(
        (d for d in decisions if d.decision == "merge"),
        key=lambda d: (METHOD_PRIORITY.get(d.method, 9), -d.score, d.left, d.right),
    )
    apart = {(d.left, d.right) for d in separates}
    parent: dict[str, str] = {}
    members: dict[str, set[str]] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        members.setdefault(x, {x})
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    ordered = list(separates)
    for d in merges:
        ra, rb = find(d.left), find(d.right)
        if ra == rb:
            ordered.append(d)
            continue
        clash = next(
            (
                (x, y)
                for x in sorted(members[ra])  # sorted: a set's order changes with the process's hash seed
                for y in sorted(members[rb])
                if tuple(sorted((x, y))) in apart
            ),
            None,
        )
        if clash:
            ordered.append(
                Decision(
                    d.left,
                    d.right,
                    "separate",
                    d.method,
                    d.score,
                    f"{d.reason}; not merged: it would join {clash[0]} and {clash[1]}, kept apart earlier",
                )
            )
            apart.add((d.left, d.right))
            continue
        parent[rb] = ra
        members[ra] |= members.pop(rb)
        ordered.append(d)
    return ordered


def apply_merge_decisions(
    raw_entities: pd.DataFrame | list[dict[str, Any]], decisions: pd.DataFrame | list[dict[str, Any]]
) -> dict[str, str]:
    """raw id -> canonical id: union-find over the 'merge' decisions in step order; a cluster's
    id is the raw id of its representative (non-proxy first, most mentions, then smallest id)."""
    entities = (
        raw_entities.to_dict("records") if isinstance(raw_entities, pd.DataFrame) else list(raw_entities)
    )
    rows = decisions.to_dict("records") if isinstance(decisions, pd.DataFrame) else list(decisions)
    parent = {e["raw_entity_id"]: e["raw_entity_id"] for e in entities}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for row in sorted(rows, key=lambda r: int(r["step"])):
        if row["decision"] == "merge" and row["left"] in parent and row["right"] in parent:
            ra, rb = find(row["left"]), find(row["right"])
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    clusters: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in entities:
        clusters[find(e["raw_entity_id"])].append(e)
    mapping = {}
    for group in clusters.values():
        representative = min(
            group, key=lambda e: (bool(e["is_proxy"]), -int(e["n_mentions"]), e["raw_entity_id"])
        )
        for e in group:
            mapping[e["raw_entity_id"]] = representative["raw_entity_id"]
    return mapping
