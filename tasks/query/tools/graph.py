"""Graph-channel tools: canonical entities, their attributes, facts and relations, and
salient entities by centrality."""

from __future__ import annotations

import networkx as nx
import numpy as np

from tasks.query.tools.env import ToolEnv
from tasks.query.tools.text import atomic_fact_search  # reused for the per-entity fact budget
from tasks.query.tools.types import ToolRow, provenance
from tasks.tables.io import as_list

FACTS_PER_ENTITY = 5  # the paper's stable setting: top-5 facts per entity by question similarity


def rank_chunks(env: ToolEnv, chunk_ids: list[str], query: str, limit: int = 3) -> list[str]:
    """`chunk_ids` ordered by similarity to `query` (dense when vectors exist, else lexical)."""
    known = [c for c in dict.fromkeys(chunk_ids) if c in env.store.chunk_position]
    if len(known) <= 1:
        return known[:limit]
    positions = [env.store.chunk_position[c] for c in known]
    vector = env.vector(query)
    source = env.store.source
    if vector is not None and source.chunk_vectors.shape[1] == vector.shape[-1]:
        scores = source.chunk_vectors[positions] @ vector
    else:
        scores = source.chunk_bm25.scores(query)[positions]
    order = np.lexsort((np.arange(len(known)), -scores))
    return [known[i] for i in order[:limit]]


def find_entities_in_text(env: ToolEnv, text: str) -> list[str]:
    """Entity ids whose name or alias occurs in `text` (longest names first, no overlaps)."""
    lowered = text.lower()
    taken: list[tuple[int, int]] = []
    found: list[str] = []
    for pattern, entity_id in env.store.name_patterns:
        for match in pattern.finditer(lowered):
            span = match.span()
            if any(s < span[1] and span[0] < e for s, e in taken):
                continue
            taken.append(span)
            if entity_id not in found:
                found.append(entity_id)
    return found


def _entity_row(env: ToolEnv, entity_id: str, score: float, query: str) -> ToolRow:
    entity = env.store.entities_by_id[entity_id]
    attributes = env.store.attributes_by_entity.get(entity_id, [])
    profile = env.store.profile_by_entity.get(entity_id)
    parts = [f"{entity['name']} ({entity['entity_type']})"]
    if entity["description"]:
        parts.append(str(entity["description"]))
    aliases = [a for a in as_list(entity["aliases"]) if a != entity["name"]]
    if aliases:
        parts.append("Also: " + ", ".join(aliases[:6]))
    shown = []
    if attributes and env.attributes:
        parts.append("; ".join(f"{r['key']}: {r['value']}" for r in attributes))
        shown.append("attribute")
    if profile is not None and env.attributes:  # the profile summary is composed from the attributes
        parts.append(str(profile["summary"]))
        shown.append("profile")
    chunk_ids = rank_chunks(env, as_list(entity["chunk_ids"]), query)
    return ToolRow(
        "entity",
        entity_id,
        ". ".join(parts),
        round(float(score), 6),
        "graph",
        env.store.doc_id,
        **provenance(env.store, chunk_ids),
        entity_ids=(entity_id,),
        extra={
            "name": entity["name"],
            "entity_type": entity["entity_type"],
            "degree": int(entity["degree"]),
            "parts": shown,
        },
    )


def entity_search(
    env: ToolEnv, query: str, top_k: int = 6, entity_types: list[str] | None = None
) -> list[ToolRow]:
    """Canonical entities named in the query first, then the semantically closest ones."""
    if not env.store.has_graph:
        return []
    scored: dict[str, float] = {entity_id: 1.0 for entity_id in find_entities_in_text(env, query)}
    index = env.store.asset("entity")
    if index is not None:
        for entity_id, score in index.search(query, env.vector(query), top_k * 2):
            scored.setdefault(entity_id, min(0.99, score))
    rows = [
        (entity_id, score)
        for entity_id, score in scored.items()
        if entity_id in env.store.entities_by_id
        and (not entity_types or env.store.entities_by_id[entity_id]["entity_type"] in entity_types)
    ]
    rows.sort(key=lambda item: (-item[1], item[0]))
    return [_entity_row(env, entity_id, score, query) for entity_id, score in rows[:top_k]]


def entity_lookup(
    env: ToolEnv, entity_id: str | None = None, name: str | None = None, query: str = ""
) -> list[ToolRow]:
    (  # a single line on purpose: the tool's description is the docstring's first line
        "An entity's attributes, profile and source locations, with its top facts and relations "
        "for the query."
    )
    if entity_id is None and name:
        matches = find_entities_in_text(env, name)
        entity_id = matches[0] if matches else None
    if entity_id is None or entity_id not in env.store.entities_by_id:
        return []
    focus = query or env.store.entities_by_id[entity_id]["name"]
    rows = [_entity_row(env, entity_id, 1.0, focus)]

    rows.extend(atomic_fact_search(env, focus, [entity_id], FACTS_PER_ENTITY))
    rows.extend(relation_search(env, focus, [entity_id], top_k=5))
    return rows


def relation_search(
    env: ToolEnv, query: str, entity_ids: list[str] | None = None, top_k: int = 8
) -> list[ToolRow]:
    """Relations among entities: those touching the given entities, or the closest to the query."""
    relations = env.store.table("relations")
    if relations.empty:
        return []
    index = env.store.asset("relation")
    allowed = None
    if entity_ids:
        touching = env.store.relations_of_entity
        allowed = {relation_id for entity_id in entity_ids for relation_id in touching.get(entity_id, ())}
        if not allowed:
            return []
    if index is not None:
        hits = index.search(query, env.vector(query), top_k, allowed)
    else:
        subset = relations if allowed is None else relations[relations["relation_id"].isin(allowed)]
        hits = [(r, 0.5) for r in subset.sort_values("weight", ascending=False)["relation_id"].head(top_k)]
    by_id = env.store.relations_by_id
    names = {k: v["name"] for k, v in env.store.entities_by_id.items()}
    rows = []
    for relation_id, score in hits:
        relation = by_id[relation_id]
        pair = (relation["source_entity_id"], relation["target_entity_id"])
        text = f"{names.get(pair[0], '?')} — {names.get(pair[1], '?')}: {relation['description'] or ''}"
        chunk_ids = rank_chunks(env, as_list(relation["chunk_ids"]), query)
        rows.append(
            ToolRow(
                "relation",
                relation_id,
                text.strip(),
                round(score, 6),
                "graph",
                env.store.doc_id,
                **provenance(env.store, chunk_ids),
                entity_ids=pair,
                extra={"weight": float(relation["weight"]), "keywords": as_list(relation["keywords"])},
            )
        )
    return rows


def top_k_by_centrality(env: ToolEnv, k: int = 8, entity_type: str | None = None) -> list[ToolRow]:
    """Globally salient entities by PageRank over the entity graph."""
    graph = env.store.entity_graph
    if graph.number_of_nodes() == 0:
        return []
    ranks = nx.pagerank(graph, weight="weight") if graph.number_of_edges() else {n: 0.0 for n in graph}
    ordered = sorted(ranks.items(), key=lambda item: (-item[1], item[0]))
    rows = []
    for entity_id, rank in ordered:
        entity = env.store.entities_by_id[entity_id]
        if entity_type and entity["entity_type"] != entity_type:
            continue
        rows.append(_entity_row(env, entity_id, rank, entity["name"]))
        if len(rows) >= k:
            break
    return rows
