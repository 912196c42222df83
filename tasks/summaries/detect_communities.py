"""detect_communities: groups of characters, places and objects that belong together, found by
Louvain modularity over the canonical entity graph (relations weighted by their weight), with a fixed
seed so a rebuild gives the same communities. Each community becomes a `communities` row; its report
(what it is, what happens to it) is written by summarize_hierarchy from the sentences naming its
members.

Nodes and edges enter the graph in sorted order: Louvain's result depends on the order it visits
nodes in as well as on the seed.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
import pandas as pd

from schemas.config import DetectCommunitiesSettings
from schemas.ids import make_id
from tasks.hierarchy.text import join_names, shorten
from tasks.stage import StageContext, StageOutput

KEY_MEMBERS = 5
NAMED_MEMBERS = 3
METHOD = "louvain"


def entity_graph(entities: pd.DataFrame, relations: pd.DataFrame) -> nx.Graph:
    """Undirected graph of the non-proxy entities that take part in a relation; parallel relations
    between one pair add their weights."""
    known = set(entities.loc[~entities["is_proxy"].astype(bool), "entity_id"].astype(str))
    weights: dict[tuple[str, str], float] = {}
    for source, target, weight in zip(
        relations["source_entity_id"], relations["target_entity_id"], relations["weight"]
    ):
        pair = tuple(sorted((str(source), str(target))))
        if pair[0] == pair[1] or not set(pair) <= known:
            continue
        weights[pair] = weights.get(pair, 0.0) + max(float(weight or 0.0), 0.0)
    graph = nx.Graph()
    graph.add_nodes_from(sorted({node for pair in weights for node in pair}))
    graph.add_weighted_edges_from((a, b, w) for (a, b), w in sorted(weights.items()))
    return graph


def find_communities(graph: nx.Graph, settings: DetectCommunitiesSettings) -> list[list[str]]:
    """Louvain communities of two members or more, each sorted by id (no edges: none)."""
    if graph.number_of_edges() == 0:
        return []
    # Relations without weight still tie their entities: unweighted then, rather than a zero total.
    weight = "weight" if graph.size(weight="weight") > 0 else None
    found = nx.community.louvain_communities(
        graph, weight=weight, resolution=settings.resolution, seed=settings.seed
    )
    return [sorted(c) for c in found if len(c) >= 2]


def community_rows(
    doc_id: str,
    communities: list[list[str]],
    graph: nx.Graph,
    entities: pd.DataFrame,
    mentions: pd.DataFrame,
    section_ordinals: dict[str, int],
    language: str,
    max_communities: int,
) -> list[dict[str, Any]]:
    """`communities` rows: the largest by mentions (at most `max_communities`), in story order of
    their members' first mention."""
    counts = dict(zip(entities["entity_id"].astype(str), entities["n_mentions"].astype(int)))
    names = dict(zip(entities["entity_id"].astype(str), entities["name"].astype(str)))
    sections_of: dict[str, set[str]] = {}
    for entity_id, section_id in zip(mentions["entity_id"].astype(str), mentions["section_id"]):
        if isinstance(section_id, str) and section_id in section_ordinals:
            sections_of.setdefault(entity_id, set()).add(section_id)
    rows = []
    for members in communities:
        members = sorted(members, key=lambda e: (-counts.get(e, 0), names.get(e, e), e))
        keys = members[:KEY_MEMBERS]
        sections = sorted(
            {s for e in keys for s in sections_of.get(e, ())}, key=lambda s: section_ordinals[s]
        )
        if not sections:
            continue  # no member is grounded in a section: nothing to report
        inside = graph.subgraph(members)
        rows.append(
            {
                "community_id": make_id("com", doc_id, members),
                "doc_id": doc_id,
                "ordinal": 0,
                "name": shorten(
                    join_names([names.get(e, e) for e in members[:NAMED_MEMBERS]], language), 150
                ),
                "member_ids": members,
                "key_member_ids": keys,
                "n_members": len(members),
                "n_mentions": int(sum(counts.get(e, 0) for e in members)),
                "internal_weight": round(float(inside.size(weight="weight")), 6),
                "section_ids": sections,
                "first_ordinal": section_ordinals[sections[0]],
                "last_ordinal": section_ordinals[sections[-1]],
                "method": METHOD,
            }
        )
    rows.sort(key=lambda r: (-r["n_mentions"], r["community_id"]))
    rows = sorted(
        rows[:max_communities], key=lambda r: (r["first_ordinal"], -r["n_mentions"], r["community_id"])
    )
    for number, row in enumerate(rows, start=1):
        row["ordinal"] = number
    return rows


def run(ctx: StageContext) -> StageOutput:
    doc = ctx.document
    settings: DetectCommunitiesSettings = ctx.settings.detect_communities
    entities, relations, mentions = ctx.table("entities"), ctx.table("relations"), ctx.table("mentions")
    sections = ctx.table("sections")
    graph = entity_graph(entities, relations)
    communities = find_communities(graph, settings)
    ordinals = dict(zip(sections["section_id"].astype(str), sections["ordinal"].astype(int)))
    rows = community_rows(
        doc.doc_id, communities, graph, entities, mentions, ordinals, doc.language, settings.max_communities
    )
    return {
        "communities": rows,
        "_details": {"graph_nodes": graph.number_of_nodes(), "graph_edges": graph.number_of_edges()},
    }
