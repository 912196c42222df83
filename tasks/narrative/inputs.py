"""Shared plumbing of the narrative extractors: one document's inputs, span -> chunk lookup,
entities inside a span, scene settings, and the row builders of events, interactions and
occasions (deterministic ids, spans clipped to their chunk)."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from schemas.ids import make_id
from tasks.entity_lexicon import EntityLexicon
from tasks.text import normalize_space

AGENT_TYPES = frozenset({"character", "group", "institution", "role"})
PLACE_TYPES = frozenset({"location"})
NON_PARTICIPANT_TYPES = frozenset({"location", "time"})
MAX_EVIDENCE_CHARS = 400


@dataclass
class NarrativeInputs:
    """One document's tables as the narrative and fact extractors need them."""

    doc_id: str
    language: str
    kind: str
    text: str
    sections: pd.DataFrame
    chunks: pd.DataFrame
    sentences: pd.DataFrame
    entities: pd.DataFrame
    mentions: pd.DataFrame
    lexicon: EntityLexicon = field(init=False)
    _chunk_starts: list[int] = field(init=False, default_factory=list)
    _chunk_rows: list[dict[str, Any]] = field(init=False, default_factory=list)
    _mention_starts: list[int] = field(init=False, default_factory=list)
    _mention_rows: list[tuple[int, int, str]] = field(init=False, default_factory=list)
    _hits: dict[tuple[int, int], list[tuple[int, str]]] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        sections = self.sections.sort_values("ordinal").reset_index(drop=True).astype(object)
        self.sections = sections.where(sections.notna(), None)  # missing headings parts as None, not NaN
        self.chunks = self.chunks.sort_values("char_start").reset_index(drop=True)
        self.sentences = self.sentences.sort_values("char_start").reset_index(drop=True)
        self.lexicon = EntityLexicon.from_entities(self.entities, self.mentions)
        self._chunk_rows = self.chunks.to_dict("records")
        self._chunk_starts = [int(c["char_start"]) for c in self._chunk_rows]
        known = set(self.lexicon.names)
        columns = ("char_start", "char_end", "entity_id")
        rows = (
            []
            if self.mentions is None or not len(self.mentions)
            else sorted(  # column lists, not itertuples: tens of thousands of mentions
                (int(start), int(end), str(entity_id))
                for start, end, entity_id in zip(*(self.mentions[c].tolist() for c in columns))
                if str(entity_id) in known
            )
        )
        self._mention_rows = rows
        self._mention_starts = [r[0] for r in rows]

    @cached_property
    def spoken_texts(self) -> frozenset[str]:
        """Texts of the sentences said under a speaker's cue, built once (every unit's evidence
        is checked against them)."""
        said = self.sentences["speaker"].notna()
        return frozenset(self.sentences.loc[said, "text"].tolist()) if len(self.sentences) else frozenset()

    @cached_property
    def surfaces_by_entity(self) -> dict[str, list[str]]:
        """Every entity's lexicon surfaces, longest first (ties in lexicon order), built once:
        attribute rules look up an entity's surfaces for each of its facts."""
        grouped: dict[str, list[str]] = {}
        for surface, entity_id in self.lexicon.surfaces.items():
            grouped.setdefault(entity_id, []).append(surface)
        return {entity_id: sorted(names, key=len, reverse=True) for entity_id, names in grouped.items()}

    @classmethod
    def from_tables(cls, document: Any, tables: dict[str, pd.DataFrame]) -> "NarrativeInputs":
        """Inputs from a StageContext's document and tables."""
        return cls(
            document.doc_id,
            document.language,
            document.kind,
            document.text,
            tables["sections"],
            tables["chunks"],
            tables["sentences"],
            tables["entities"],
            tables["mentions"],
        )

    def chunk_at(self, position: int) -> dict[str, Any]:
        """The chunk whose span holds `position` (or the nearest one before it)."""
        index = max(0, bisect.bisect_right(self._chunk_starts, position) - 1)
        return self._chunk_rows[index]

    def entities_in(self, start: int, end: int) -> list[tuple[int, str]]:
        """(position, entity id) of every entity named in [start, end): lexicon matches and grounded
        mentions (found once per span: the fact extractor reads a sentence once for every entity
        of its chunk)."""
        found = self._hits.get((start, end))
        if found is None:
            found = self._hits[(start, end)] = self._entities_in(start, end)
        return found

    def _entities_in(self, start: int, end: int) -> list[tuple[int, str]]:
        matches = self.lexicon.find_mentions(self.text[start:end], offset=start)
        hits = {(m.start, m.entity_id) for m in matches}
        index = bisect.bisect_left(self._mention_starts, start)
        while index < len(self._mention_rows) and self._mention_rows[index][0] < end:
            mention_start, mention_end, entity_id = self._mention_rows[index]
            # A mention inside a longer name of another entity ("警察" in "警察局") is not that entity.
            covered = any(
                m.start <= mention_start
                and mention_end <= m.end
                and m.entity_id != entity_id
                and m.end - m.start > mention_end - mention_start
                for m in matches
            )
            if mention_end <= end and not covered:
                hits.add((mention_start, entity_id))
            index += 1
        ordered: dict[str, int] = {}
        for position, entity_id in sorted(hits):
            ordered.setdefault(entity_id, position)
        return sorted(((p, e) for e, p in ordered.items()))

    def of_types(
        self, hits: list[tuple[int, str]], types: frozenset[str], exclude: bool = False
    ) -> list[str]:
        """Entity ids of `hits` whose type is (or, with `exclude`, is not) in `types`, in order."""
        return [e for _, e in hits if (self.lexicon.types.get(e) in types) != exclude]

    def setting_for(self, section: dict[str, Any]) -> str | None:
        """The location entity of a scene: its heading's location resolved among location entities."""
        for probe in (section.get("location"), section.get("heading")):
            if not probe:
                continue
            for entity_id in self.lexicon.resolve(str(probe)):
                if self.lexicon.types.get(entity_id) in PLACE_TYPES:
                    return entity_id
        return None

    @property
    def chunk_rows(self) -> list[dict[str, Any]]:
        """The chunks as records in text order (made once)."""
        return self._chunk_rows

    def section_sentences(self, section: dict[str, Any]) -> list[dict[str, Any]]:
        """The sentences of one section as records, in text order."""
        return self._by_section[0].get(section["section_id"], [])

    def section_chunk_ids(self, section_id: str) -> list[str]:
        """The chunk ids of one section, in text order."""
        return self._by_section[1].get(section_id, [])

    def chunk_sentences(self, chunk_ids: list[str]) -> list[dict[str, Any]]:
        """The sentences of the given chunks as records, in text order."""
        by_chunk = self._by_chunk
        return [record for _, record in sorted(p for c in set(chunk_ids) for p in by_chunk.get(c, []))]

    @cached_property
    def heading_keys(self) -> frozenset[tuple[int, str]]:
        """(char_start, heading) of every section: a sentence that is its section's heading."""
        sections = self.sections
        return frozenset(zip(sections["char_start"].astype(int), sections["heading"].astype(str)))

    @cached_property
    def _by_chunk(self) -> dict[str, list[tuple[int, dict[str, Any]]]]:
        grouped: dict[str, list[tuple[int, dict[str, Any]]]] = {}
        for position, record in enumerate(self.sentences.to_dict("records")):
            grouped.setdefault(record["chunk_id"], []).append((position, record))
        return grouped

    @cached_property
    def _by_section(self) -> tuple[dict[str, list[dict[str, Any]]], dict[str, list[str]]]:
        # Grouped once: the extractors ask for every section's sentences and chunks in turn, and a
        # filter of the document's table per section made that quadratic in the screenplay's length.
        sentences: dict[str, list[dict[str, Any]]] = {}
        for record in self.sentences.to_dict("records"):
            sentences.setdefault(record["section_id"], []).append(record)
        chunks: dict[str, list[str]] = {}
        for chunk in self._chunk_rows:
            chunks.setdefault(chunk["section_id"], []).append(chunk["chunk_id"])
        return sentences, chunks


def evidence_text(text: str) -> str:
    """Source wording on one line, cut to a readable length."""
    clean = normalize_space(text)
    return clean if len(clean) <= MAX_EVIDENCE_CHARS else clean[: MAX_EVIDENCE_CHARS - 1].rstrip() + "…"


def clip_to_chunk(inputs: NarrativeInputs, start: int, end: int) -> tuple[dict[str, Any], int, int]:
    """The chunk holding `start`, and the span cut to lie inside it."""
    chunk = inputs.chunk_at(start)
    chunk_start, chunk_end = int(chunk["char_start"]), int(chunk["char_end"])
    start = min(max(start, chunk_start), chunk_end)
    return chunk, start, max(start, min(end, chunk_end))


def event_row(
    inputs: NarrativeInputs,
    start: int,
    end: int,
    description: str,
    event_type: str,
    participant_ids: list[str],
    setting_id: str | None,
    time_cue: str | None,
    evidence: str,
    method: str,
    salt: str = "",
) -> dict[str, Any]:
    """One `events` row; the id hashes the span, the type and the description."""
    chunk, start, end = clip_to_chunk(inputs, start, end)
    return {
        "event_id": make_id("evt", inputs.doc_id, start, end, event_type, description, salt),
        "doc_id": inputs.doc_id,
        "section_id": chunk["section_id"],
        "chunk_id": chunk["chunk_id"],
        "char_start": start,
        "char_end": end,
        "description": description,
        "event_type": event_type,
        "participant_ids": list(dict.fromkeys(participant_ids)),
        "setting_id": setting_id,
        "time_cue": time_cue,
        "evidence": evidence_text(evidence),
        "method": method,
    }


def interaction_row(
    inputs: NarrativeInputs,
    start: int,
    end: int,
    subject_id: str | None,
    object_ids: list[str],
    interaction_type: str,
    description: str,
    event_id: str | None,
    occasion_id: str | None,
    is_dialogue: bool,
    evidence: str,
    method: str,
    salt: str = "",
) -> dict[str, Any]:
    """One `interactions` row; the id hashes the span, the direction and the type."""
    chunk, start, end = clip_to_chunk(inputs, start, end)
    objects = [o for o in dict.fromkeys(object_ids) if o != subject_id]
    return {
        "interaction_id": make_id(
            "int", inputs.doc_id, start, end, subject_id, objects, interaction_type, salt
        ),
        "doc_id": inputs.doc_id,
        "section_id": chunk["section_id"],
        "chunk_id": chunk["chunk_id"],
        "char_start": start,
        "char_end": end,
        "subject_id": subject_id,
        "object_ids": objects,
        "interaction_type": interaction_type,
        "description": description,
        "event_id": event_id,
        "occasion_id": occasion_id,
        "is_dialogue": is_dialogue,
        "evidence": evidence_text(evidence),
        "method": method,
    }


def occasion_row(
    inputs: NarrativeInputs,
    description: str,
    occasion_type: str,
    participant_ids: list[str],
    setting_id: str | None,
    section_ids: list[str],
    chunk_ids: list[str],
    method: str,
    key: str = "",
) -> dict[str, Any]:
    """One `occasions` row; the id hashes the type, the sections and a caller key (or the description)."""
    return {
        "occasion_id": make_id("occ", inputs.doc_id, occasion_type, section_ids, key or description),
        "doc_id": inputs.doc_id,
        "description": description,
        "occasion_type": occasion_type,
        "participant_ids": list(dict.fromkeys(participant_ids)),
        "setting_id": setting_id,
        "section_ids": list(dict.fromkeys(section_ids)),
        "chunk_ids": list(dict.fromkeys(chunk_ids)),
        "method": method,
    }


def join_names(names: list[str], language: str) -> str:
    """ "A", "A and B", "A, B and C" (English) or "A、B" (Chinese)."""
    if language == "zh":
        return "、".join(names)
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def sort_units(rows: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Rows in story order, ties by id, duplicates (same id) dropped."""
    unique = {row[key]: row for row in rows}
    return sorted(unique.values(), key=lambda r: (r.get("char_start", 0), r[key]))


def locate_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where `quote` occurs in `text`: exactly, else with any run of whitespace, else its longest line."""
    quote = (quote or "").strip().strip('"“”「」').strip()
    if not quote:
        return None
    position = text.find(quote)
    if position >= 0:
        return position, position + len(quote)
    words = quote.split()
    if words:
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
        match = pattern.search(text)
        if match:
            return match.start(), match.end()
    parts = sorted(
        (p.strip() for p in re.split(r"[\n…]|\.\.\.", quote) if len(p.strip()) >= 12), key=len, reverse=True
    )
    for part in parts:
        position = text.find(part)
        if position >= 0:
            return position, position + len(part)
    return None
