"""The evidence board (paper appendix A.2): a cluster-merge-balanced allocator for entity,
relation and narrative items, then source passages chosen under a token budget.

Items are scored by query similarity, lexical overlap, source overlap with the text
retrieval, length, channel and relation-pair identity; near-duplicates and items grounded in
the same source are clustered and represented once; budgets 8 entity / 8 narrative / 16
relation items with floors of 5 for entity and narrative. Source passages are ranked by the
support every board item and text hit gives their chunk; source text takes precedence over
summaries in the final packet, and evidence recall counts only these passages.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks.query.tools.types import ToolRow
from tasks.text import content_words, count_tokens

CHANNEL_OF_KIND = {
    "entity": "entity",
    "fact": "entity",
    "attribute": "entity",
    "relation": "relation",
    "event": "narrative",
    "interaction": "narrative",
    "occasion": "narrative",
    "episode": "narrative",
    "storyline": "narrative",
    "sql": "narrative",
}
TEXT_KINDS = ("chunk", "section", "sentence")
CHANNEL_PRIOR = {"entity": 0.05, "narrative": 0.05, "relation": 0.0}
DUPLICATE_OVERLAP = 0.8


@dataclass(frozen=True)
class BoardBudget:
    entity: int = 8
    narrative: int = 8
    relation: int = 16
    entity_floor: int = 5
    narrative_floor: int = 5
    facts_per_entity: int = 5
    per_cluster: int = 1


@dataclass
class BoardItem:
    row: ToolRow
    channel: str
    score: float
    cluster: str
    facts: list[ToolRow] = field(default_factory=list)


@dataclass
class Passage:
    chunk_id: str
    section_id: str
    heading: str
    ordinal: int
    text: str
    n_tokens: int
    char_start: int
    char_end: int
    support: float
    supported_by: list[str] = field(default_factory=list)


@dataclass
class EvidenceBoard:
    entities: list[BoardItem]
    relations: list[BoardItem]
    narrative: list[BoardItem]
    passages: list[Passage]
    source_budget: int

    @property
    def source_tokens(self) -> int:
        return sum(p.n_tokens for p in self.passages)

    def composition(self) -> dict[str, int]:
        return {
            "entity_items": len(self.entities),
            "relation_items": len(self.relations),
            "narrative_items": len(self.narrative),
            "facts": sum(len(i.facts) for i in self.entities),
            "passages": len(self.passages),
            "source_tokens": self.source_tokens,
            "source_budget": self.source_budget,
        }


def _overlap(a: set[str], b: set[str]) -> float:
    return len(a & b) / max(1, min(len(a), len(b)))


def score_items(
    rows: list[ToolRow], question: str, text_chunks: dict[str, float], question_entities: set[str]
) -> list[BoardItem]:
    """Score every structured row once (the best-scoring copy of a repeated item wins)."""
    question_terms = content_words(question)
    best: dict[tuple[str, str], BoardItem] = {}
    for row in rows:
        channel = CHANNEL_OF_KIND.get(row.kind)
        if channel is None:
            continue
        terms = content_words(row.text)
        lexical = len(terms & question_terms) / max(1, len(question_terms))
        source = max((text_chunks.get(c, 0.0) for c in row.source_chunk_ids), default=0.0)
        length = min(1.0, count_tokens(row.text) / 400)
        pair = 0.15 if row.kind == "relation" and len(set(row.entity_ids) & question_entities) == 2 else 0.0
        named = 0.1 if set(row.entity_ids) & question_entities else 0.0
        score = (
            0.45 * min(1.0, row.score)
            + 0.3 * lexical
            + 0.15 * source
            + pair
            + named
            + CHANNEL_PRIOR[channel]
            - 0.1 * length
        )
        key = (row.kind, row.item_id)
        if key not in best or score > best[key].score:
            cluster = row.source_chunk_ids[0] if row.source_chunk_ids else row.item_id
            best[key] = BoardItem(row, channel, round(score, 6), f"{channel}:{cluster}")
    return sorted(best.values(), key=lambda item: (-item.score, item.row.item_id))


def _merge_duplicates(items: list[BoardItem]) -> list[BoardItem]:
    """Items whose texts mostly repeat a better item join its cluster."""
    kept_terms: list[tuple[BoardItem, set[str]]] = []
    for item in items:
        terms = content_words(item.row.text)
        for other, other_terms in kept_terms:
            if other.channel == item.channel and terms and _overlap(terms, other_terms) >= DUPLICATE_OVERLAP:
                item.cluster = other.cluster
                break
        else:
            kept_terms.append((item, terms))
    return items


def allocate(items: list[BoardItem], budget: BoardBudget) -> dict[str, list[BoardItem]]:
    """Per-cluster representatives, channel caps, and floors so relations cannot crowd out the rest."""
    items = _merge_duplicates(items)
    caps = {"entity": budget.entity, "narrative": budget.narrative, "relation": budget.relation}
    floors = {"entity": budget.entity_floor, "narrative": budget.narrative_floor, "relation": 0}
    chosen: dict[str, list[BoardItem]] = {"entity": [], "narrative": [], "relation": []}
    per_cluster: dict[str, int] = {}
    # First satisfy the floors from each channel's best items, then fill by global score.
    for phase in ("floor", "fill"):
        for item in items:
            channel = item.channel
            limit = floors[channel] if phase == "floor" else caps[channel]
            if item in chosen[channel] or len(chosen[channel]) >= limit:
                continue
            if per_cluster.get(item.cluster, 0) >= budget.per_cluster:
                continue
            chosen[channel].append(item)
            per_cluster[item.cluster] = per_cluster.get(item.cluster, 0) + 1
    return chosen


def attach_facts(entities: list[BoardItem], fact_rows: list[ToolRow], per_entity: int) -> None:
    """At most `per_entity` facts per entity, best first (fact rows arrive ranked by question similarity)."""
    ordered = sorted({(r.item_id): r for r in fact_rows}.values(), key=lambda r: (-r.score, r.item_id))
    for item in entities:
        if item.row.kind != "entity":
            continue
        item.facts = [r for r in ordered if r.entity_ids and r.entity_ids[0] == item.row.item_id][:per_entity]


def chunk_support(
    board: dict[str, list[BoardItem]], text_rows: list[ToolRow]
) -> dict[str, tuple[float, list[str]]]:
    """How strongly each chunk is supported: text hits plus the provenance of every board item.

    Several tools pointing at the same source strengthen it (appendix A.3)."""
    support: dict[str, tuple[float, list[str]]] = {}

    def add(chunk_id: str, amount: float, by: str) -> None:
        score, sources = support.get(chunk_id, (0.0, []))
        support[chunk_id] = (score + amount, sources + [by])

    for rank, row in enumerate(text_rows):
        for chunk_id in row.source_chunk_ids[:1]:
            add(chunk_id, 1.0 / (1 + rank * 0.5), f"{row.kind}:{row.item_id}")
    for items in board.values():
        for item in items:
            rows = [item.row, *item.facts]
            for row in rows:
                for position, chunk_id in enumerate(row.source_chunk_ids[:2]):
                    add(chunk_id, item.score * (0.6 if position == 0 else 0.3), f"{row.kind}:{row.item_id}")
    return support
