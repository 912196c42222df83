"""The merge-and-upsert step of graph extraction (paper §3.1.1): entity, mention and relation
drafts from any extractor are consolidated into raw_entities / raw_mentions / raw_relations.

Same-name entities collapse to one row per (type, normalized name); same-pair relations to
one row per unordered pair; long descriptions are compacted. Every mention is checked to lie
inside its chunk with the surface at its span, so extractors cannot emit ungrounded rows.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable

import pandas as pd

from schemas.ids import make_id
from tasks.graph.names import compact_description, display_name, normalize_name, raw_entity_id

EntityKey = tuple[str, str]  # (entity type, normalized name)
MAX_KEYWORDS = 8


@dataclass(frozen=True)
class ChunkInfo:
    chunk_id: str
    section_id: str
    ordinal: int
    start: int
    end: int


class ChunkIndex:
    """Chunks of one document by position: which chunk holds a span."""

    def __init__(self, chunks: pd.DataFrame) -> None:
        ordered = chunks.sort_values("char_start")
        self.chunks = [
            ChunkInfo(r.chunk_id, r.section_id, int(r.ordinal), int(r.char_start), int(r.char_end))
            for r in ordered.itertuples()
        ]
        self._starts = [c.start for c in self.chunks]
        self.by_id = {c.chunk_id: c for c in self.chunks}

    def locate(self, start: int, end: int) -> ChunkInfo | None:
        """The chunk that contains [start, end), or None when the span crosses a boundary."""
        index = bisect.bisect_right(self._starts, start) - 1
        if index < 0:
            return None
        chunk = self.chunks[index]
        return chunk if chunk.start <= start and end <= chunk.end else None

    def ordinal(self, chunk_id: str) -> int:
        return self.by_id[chunk_id].ordinal


@dataclass
class EntityDraft:
    entity_type: str
    key: str
    names: Counter = field(default_factory=Counter)  # display names proposed for this entity
    descriptions: list[str] = field(default_factory=list)
    methods: set[str] = field(default_factory=set)
    is_proxy: bool = True  # stays True only if every proposal was a proxy
    written: set[str] = field(
        default_factory=set
    )  # forms seen in the text that are not mention spans (cue lines)


@dataclass
class RelationDraft:
    descriptions: list[str] = field(default_factory=list)
    keywords: Counter = field(default_factory=Counter)
    weight: float = 0.0
    chunk_ids: set[str] = field(default_factory=set)
    methods: set[str] = field(default_factory=set)


class GraphDraft:
    """Accumulates extraction results of one document; `to_rows` consolidates them."""

    def __init__(self, doc_id: str, text: str, chunks: ChunkIndex) -> None:
        self.doc_id = doc_id
        self.text = text
        self.chunks = chunks
        self.entities: dict[EntityKey, EntityDraft] = {}
        self.mentions: dict[tuple[EntityKey, int, int], str] = {}
        self.relations: dict[tuple[EntityKey, EntityKey], RelationDraft] = {}
        self.rejected_mentions = 0

    def add_entity(
        self,
        entity_type: str,
        name: str,
        description: str | None = None,
        method: str = "heuristic",
        is_proxy: bool = False,
    ) -> EntityKey | None:
        """Register (or reinforce) an entity; None when the name normalizes to nothing."""
        key = normalize_name(name)
        if not key:
            return None
        entity_key = (entity_type, key)
        draft = self.entities.get(entity_key)
        if draft is None:  # not setdefault: a draft built per call was most of the call's cost
            draft = self.entities[entity_key] = EntityDraft(entity_type, key)
        draft.names[display_name(name)] += 1
        draft.methods.add(method)
        draft.is_proxy = draft.is_proxy and is_proxy
        if description:
            draft.descriptions.append(description)
        return entity_key

    def add_written_form(self, entity_key: EntityKey, form: str) -> None:
        """A form the text uses for the entity beyond its mention spans ("HOLDEN V.O.", "OC FAN")."""
        if entity_key in self.entities and form.strip():
            self.entities[entity_key].written.add(" ".join(form.split()))

    def describe(self, entity_key: EntityKey, description: str) -> None:
        if description:
            self.entities[entity_key].descriptions.append(description)

    def add_mention(self, entity_key: EntityKey, start: int, end: int) -> bool:
        """A grounded mention; rejected (False) unless the span lies inside one chunk."""
        if end <= start or self.chunks.locate(start, end) is None or not self.text[start:end].strip():
            self.rejected_mentions += 1
            return False
        self.mentions[(entity_key, start, end)] = self.text[start:end]
        return True

    def add_relation(
        self,
        a: EntityKey,
        b: EntityKey,
        description: str,
        keywords: Iterable[str],
        chunk_ids: Iterable[str],
        weight: float = 1.0,
        method: str = "heuristic",
    ) -> None:
        """One piece of evidence for the unordered pair (a, b); self-pairs are ignored."""
        if a == b:
            return
        pair = (a, b) if a < b else (b, a)
        draft = self.relations.setdefault(pair, RelationDraft())
        if description:
            draft.descriptions.append(description)
        draft.keywords.update(k.strip().lower() for k in keywords if k and k.strip())
        draft.weight += weight
        draft.chunk_ids.update(chunk_ids)
        draft.methods.add(method)

    # -- consolidation -------------------------------------------------------------------

    def to_rows(self, max_description_chars: int) -> dict[str, list[dict[str, Any]]]:
        """raw_entities, raw_mentions and raw_relations rows, sorted by id."""
        ids = {key: raw_entity_id(self.doc_id, key[0], key[1]) for key in self.entities}
        mention_rows = []
        chunks_of: dict[EntityKey, set[str]] = {}
        for (key, start, end), surface in self.mentions.items():
            chunk = self.chunks.locate(start, end)
            chunks_of.setdefault(key, set()).add(chunk.chunk_id)
            mention_rows.append(
                {
                    "mention_id": make_id("rmen", self.doc_id, ids[key], start, end),
                    "doc_id": self.doc_id,
                    "raw_entity_id": ids[key],
                    "chunk_id": chunk.chunk_id,
                    "surface": surface,
                    "char_start": start,
                    "char_end": end,
                }
            )
        n_mentions = Counter(key for key, _, _ in self.mentions)
        surfaces: dict[EntityKey, set[str]] = {}
        for (key, _, _), surface in self.mentions.items():
            surfaces.setdefault(key, set()).add(" ".join(surface.split()))
        relation_rows = []
        for (a, b), draft in self.relations.items():
            source, target = sorted((ids[a], ids[b]))
            for key in (a, b):  # an entity known only through relations is grounded by their chunks
                if not n_mentions.get(key):
                    chunks_of.setdefault(key, set()).update(draft.chunk_ids)
            relation_rows.append(
                {
                    "raw_relation_id": make_id("rrel", self.doc_id, source, target),
                    "doc_id": self.doc_id,
                    "source_raw_id": source,
                    "target_raw_id": target,
                    "description": compact_description(draft.descriptions, max_description_chars),
                    "keywords": [
                        k for k, _ in sorted(draft.keywords.items(), key=lambda kv: (-kv[1], kv[0]))
                    ][:MAX_KEYWORDS],
                    "weight": float(draft.weight),
                    "chunk_ids": self._ordered_chunks(draft.chunk_ids),
                    "method": "+".join(sorted(draft.methods)),
                }
            )
        entity_rows = []
        for key, draft in self.entities.items():
            chunk_ids = self._ordered_chunks(chunks_of.get(key, set()))
            name = sorted(draft.names.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0][0]
            entity_rows.append(
                {
                    "raw_entity_id": ids[key],
                    "doc_id": self.doc_id,
                    "name": name,
                    "entity_type": key[0],
                    "description": compact_description(draft.descriptions, max_description_chars),
                    "surfaces": sorted(surfaces.get(key, set()) | set(draft.names) | draft.written),
                    "is_proxy": draft.is_proxy,
                    "n_mentions": int(n_mentions.get(key, 0)),
                    "chunk_ids": chunk_ids,
                    "first_ordinal": self.chunks.ordinal(chunk_ids[0]) if chunk_ids else None,
                    "method": "+".join(sorted(draft.methods)),
                }
            )
        return {
            "raw_entities": sorted(entity_rows, key=lambda r: r["raw_entity_id"]),
            "raw_mentions": sorted(
                mention_rows, key=lambda r: (r["char_start"], r["char_end"], r["mention_id"])
            ),
            "raw_relations": sorted(relation_rows, key=lambda r: r["raw_relation_id"]),
        }

    def _ordered_chunks(self, chunk_ids: Iterable[str]) -> list[str]:
        return sorted(set(chunk_ids), key=self.chunks.ordinal)

    def prune(self, keep: set[EntityKey]) -> None:
        """Drop entities not in `keep` (with their mentions and relations)."""
        self.entities = {k: v for k, v in self.entities.items() if k in keep}
        self.mentions = {m: s for m, s in self.mentions.items() if m[0] in keep}
        self.relations = {p: r for p, r in self.relations.items() if p[0] in keep and p[1] in keep}


def claim_spans(candidates: list[tuple[int, int, Any]]) -> list[tuple[int, int, Any]]:
    """Non-overlapping spans: earliest start first, the longest at one start wins."""
    chosen: list[tuple[int, int, Any]] = []
    last_end = -1
    for start, end, payload in sorted(candidates, key=lambda c: (c[0], -(c[1] - c[0]))):
        if start >= last_end:
            chosen.append((start, end, payload))
            last_end = end
    return chosen
