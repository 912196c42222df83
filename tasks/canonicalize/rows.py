"""Canonical entities, mentions and relations from raw rows and a raw -> canonical id map.

Mentions keep their spans and take the canonical id; relations are re-keyed by the
unordered canonical pair, consolidated, and dropped when both ends merged into one entity;
degree is the number of distinct relation neighbours.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import pandas as pd

from schemas.ids import make_id
from tasks.graph.names import ZH_FAMILIAR_PREFIXES, compact_description, is_cjk, name_parts
from tasks.tables.io import as_list

MAX_KEYWORDS = 8


def best_name(members: list[dict[str, Any]]) -> str:
    """The cluster's display name: the fullest untitled personal name, else the representative's."""
    candidates = [m for m in members if not m["is_proxy"]] or members

    def rank(m: dict[str, Any]) -> tuple:
        name = m["name"]
        if is_cjk(name):
            familiar = len(name) == 2 and name.startswith(ZH_FAMILIAR_PREFIXES)
            return (familiar, -len(name), -int(m["n_mentions"]), name)
        parts = name_parts(name)
        return (parts.title is not None, -len(parts.tokens), -int(m["n_mentions"]), name)

    if members[0]["entity_type"] != "character":
        return max(candidates, key=lambda m: (int(m["n_mentions"]), m["name"]))["name"]
    return min(candidates, key=rank)["name"]


def canonical_rows(
    doc_id: str,
    raw_entities: pd.DataFrame,
    raw_mentions: pd.DataFrame,
    raw_relations: pd.DataFrame,
    chunks: pd.DataFrame,
    sections: pd.DataFrame,
    mapping: dict[str, str],
    max_description_chars: int,
) -> dict[str, list[dict[str, Any]]]:
    """entities, mentions and relations rows for one document under `mapping`."""
    chunk_info = {c.chunk_id: (int(c.ordinal), c.section_id) for c in chunks.itertuples()}
    section_ordinal = {s.section_id: int(s.ordinal) for s in sections.itertuples()}
    by_chunk = lambda ids: sorted(set(ids), key=lambda c: chunk_info[c][0])  # noqa: E731
    by_section = lambda ids: sorted(set(ids), key=lambda s: section_ordinal[s])  # noqa: E731

    mentions: dict[tuple[str, int, int], dict[str, Any]] = {}
    ordered = raw_mentions.sort_values(["char_start", "char_end", "mention_id"])
    columns = ("raw_entity_id", "char_start", "char_end", "chunk_id", "surface")
    # Plain column lists rather than itertuples: a document has tens of thousands of mentions.
    for raw_id, start, end, chunk_id, surface in zip(*(ordered[c].tolist() for c in columns)):
        entity_id = mapping[raw_id]
        key = (entity_id, int(start), int(end))
        if key not in mentions:
            mentions[key] = {
                "mention_id": make_id("men", doc_id, entity_id, start, end),
                "doc_id": doc_id,
                "entity_id": entity_id,
                "chunk_id": chunk_id,
                "section_id": chunk_info[chunk_id][1],
                "surface": surface,
                "char_start": int(start),
                "char_end": int(end),
            }

    relations = _relations(
        doc_id, raw_relations, mapping, chunk_info, by_chunk, by_section, max_description_chars
    )
    neighbours: dict[str, set[str]] = defaultdict(set)
    for r in relations:
        neighbours[r["source_entity_id"]].add(r["target_entity_id"])
        neighbours[r["target_entity_id"]].add(r["source_entity_id"])

    clusters: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in raw_entities.sort_values("raw_entity_id").to_dict("records"):
        clusters[mapping[e["raw_entity_id"]]].append(e)
    n_mentions = Counter(m["entity_id"] for m in mentions.values())
    mention_chunks: dict[str, set[str]] = defaultdict(set)
    for m in mentions.values():
        mention_chunks[m["entity_id"]].add(m["chunk_id"])
    entities = []
    for entity_id, members in sorted(clusters.items()):
        representative = next(m for m in members if m["raw_entity_id"] == entity_id)
        ordered = [representative] + [m for m in members if m is not representative]
        aliases = sorted({m["name"] for m in members} | {s for m in members for s in as_list(m["surfaces"])})
        chunk_ids = by_chunk(
            mention_chunks[entity_id] | {c for m in members for c in as_list(m["chunk_ids"])}
        )
        entities.append(
            {
                "entity_id": entity_id,
                "doc_id": doc_id,
                "name": best_name(ordered),
                "entity_type": representative["entity_type"],
                "description": compact_description(
                    [m["description"] or "" for m in ordered], max_description_chars
                ),
                "aliases": aliases,
                "is_proxy": all(bool(m["is_proxy"]) for m in members),
                "degree": len(neighbours[entity_id]),
                "n_mentions": int(n_mentions[entity_id]),
                "raw_entity_ids": sorted(m["raw_entity_id"] for m in members),
                "chunk_ids": chunk_ids,
                "section_ids": by_section(chunk_info[c][1] for c in chunk_ids),
            }
        )
    return {
        "entities": entities,
        "mentions": sorted(
            mentions.values(), key=lambda m: (m["char_start"], m["char_end"], m["mention_id"])
        ),
        "relations": relations,
    }


def _relations(
    doc_id: str,
    raw_relations: pd.DataFrame,
    mapping: dict[str, str],
    chunk_info: dict[str, tuple[int, str]],
    by_chunk,
    by_section,
    max_description_chars: int,
) -> list[dict[str, Any]]:
    grouped: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for r in raw_relations.sort_values("raw_relation_id").itertuples():
        source, target = mapping[r.source_raw_id], mapping[r.target_raw_id]
        if source == target:
            continue  # both ends merged into one entity: a self-relation says nothing
        grouped[tuple(sorted((source, target)))].append(r)
    rows = []
    for (source, target), members in sorted(grouped.items()):
        members = sorted(members, key=lambda r: (-float(r.weight), r.raw_relation_id))
        keywords: Counter = Counter()
        for r in members:
            keywords.update(as_list(r.keywords))
        chunk_ids = by_chunk(c for r in members for c in as_list(r.chunk_ids))
        rows.append(
            {
                "relation_id": make_id("rel", doc_id, source, target),
                "doc_id": doc_id,
                "source_entity_id": source,
                "target_entity_id": target,
                "description": compact_description(
                    [r.description or "" for r in members], max_description_chars
                ),
                "keywords": [k for k, _ in sorted(keywords.items(), key=lambda kv: (-kv[1], kv[0]))][
                    :MAX_KEYWORDS
                ],
                "weight": float(sum(float(r.weight) for r in members)),
                "chunk_ids": chunk_ids,
                "section_ids": by_section(chunk_info[c][1] for c in chunk_ids),
                "raw_relation_ids": [
                    r.raw_relation_id for r in sorted(members, key=lambda r: r.raw_relation_id)
                ],
            }
        )
    return rows
