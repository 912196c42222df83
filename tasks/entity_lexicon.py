"""Resolve names and free text to canonical entity ids through a lexicon of names and aliases.

Pure and self-contained: English surfaces match on word boundaries, longest first (so
"Tom Hale" wins over "Tom"); Chinese surfaces match as substrings, longest first (so
"程勇爸爸" wins over "程勇"). Used by the narrative and fact stages to turn mentions,
speakers and LLM-returned names into ids of the `entities` table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

import pandas as pd

from tasks.text import CJK_CHAR

# Titles and function words never used alone as a derived first/last-name surface.
_NOT_NAME_PARTS = frozenset(
    """
mr mrs ms miss dr sir lady lord the a an of and old young little big mister madam captain king queen prince
princess doctor father mother uncle aunt saint st van von de la le da
""".split()
)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
# Words with inner apostrophes and hyphens ("O'Brien", "Steve-Dave"), but a possessive "'s" stays outside.
NAME_TOKEN = re.compile(r"[^\W_]+(?:(?:['’](?![sS]\b)|-)[^\W_]+)*")


def _key(surface: str) -> str:
    """Match key of a Latin-script surface: its word tokens, casefolded, joined by one space."""
    return " ".join(NAME_TOKEN.findall(surface)).casefold()


@dataclass(frozen=True)
class Match:
    start: int
    end: int
    entity_id: str
    surface: str


@dataclass
class EntityLexicon:
    """Surfaces (casefolded) -> entity id, with the entity rows for names and types."""

    surfaces: dict[str, str] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # entity id -> display name
    types: dict[str, str] = field(default_factory=dict)  # entity id -> entity type
    lowercase: set[str] = field(default_factory=set)  # surfaces that may match in lower case (common nouns)
    _latin: tuple[dict[str, str], int, dict[str, str], int] | None = None
    _first_words: frozenset[str] = frozenset()  # first word of every Latin key (most tokens start none)

    @classmethod
    def from_entities(
        cls, entities: pd.DataFrame | Iterable[dict[str, Any]], mentions: pd.DataFrame | None = None
    ) -> "EntityLexicon":
        """A lexicon over every entity's name, aliases and grounded mention surfaces, plus unambiguous
        name parts of characters."""
        rows = entities.to_dict("records") if isinstance(entities, pd.DataFrame) else list(entities)
        rows = sorted(rows, key=lambda r: (-int(r.get("degree") or 0), str(r["entity_id"])))
        seen_surfaces: dict[str, list[str]] = {}
        if mentions is not None and len(mentions):
            for entity_id, surface in sorted(
                set(zip(mentions["entity_id"].astype(str), mentions["surface"].astype(str)))
            ):
                seen_surfaces.setdefault(entity_id, []).append(surface)
        lexicon = cls()
        owners: dict[str, set[str]] = {}
        for row in rows:
            entity_id = str(row["entity_id"])
            lexicon.names[entity_id] = str(row["name"])
            lexicon.types[entity_id] = str(row.get("entity_type") or "")
            for surface in _surfaces(row) + seen_surfaces.get(entity_id, []):
                owners.setdefault(surface.casefold(), set()).add(entity_id)
                if surface == surface.lower() and not CJK_CHAR.search(surface):
                    lexicon.lowercase.add(surface.casefold())
        for key, ids in owners.items():
            if len(ids) == 1:
                lexicon.surfaces[key] = next(iter(ids))
            else:  # a shared alias goes to the most connected entity (rows were sorted by degree)
                lexicon.surfaces[key] = _first_owner(rows, ids)
        # Parts of multi-word character names ("Margaret" of "Margaret Hale") when no other entity
        # claims them.
        part_owners: dict[str, set[str]] = {}
        for row in rows:
            if str(row.get("entity_type")) != "character":
                continue
            for surface in _surfaces(row):
                for part in re.findall(r"[A-Za-z][A-Za-z'’\-]+", surface):
                    if len(part) > 2 and part.casefold() not in _NOT_NAME_PARTS and part[0].isupper():
                        part_owners.setdefault(part.casefold(), set()).add(str(row["entity_id"]))
        for key, ids in part_owners.items():
            if len(ids) == 1 and key not in lexicon.surfaces:
                lexicon.surfaces[key] = next(iter(ids))
        return lexicon

    def _index(self) -> tuple[dict[str, str], int, dict[str, str], int]:
        if self._latin is None:
            latin = {_key(s): s for s in self.surfaces if not CJK_CHAR.search(s) and _key(s)}
            cjk = {s: s for s in self.surfaces if CJK_CHAR.search(s)}
            self._latin = (
                latin,
                max((k.count(" ") + 1 for k in latin), default=0),
                cjk,
                max((len(k) for k in cjk), default=0),
            )
            self._first_words = frozenset(k.split(" ", 1)[0] for k in latin)
        return self._latin

    def find_mentions(self, text: str, offset: int = 0) -> list[Match]:
        """Non-overlapping entity matches in `text`, leftmost-longest, with spans shifted by `offset`."""
        if not text or not self.surfaces:
            return []
        latin, max_words, cjk, max_chars = self._index()
        found: list[Match] = []
        if latin:
            tokens = [(m.start(), m.end(), m.group(0)) for m in NAME_TOKEN.finditer(text)]
            folded = [t[2].casefold() for t in tokens]  # casefolding is per character: join, then fold
            first_words = self._first_words
            i = 0
            while i < len(tokens):
                hit = None
                for n in range(min(max_words, len(tokens) - i) if folded[i] in first_words else 0, 0, -1):
                    key = " ".join(folded[i : i + n])
                    surface = latin.get(key)
                    if surface is None:
                        continue
                    shown = text[tokens[i][0] : tokens[i + n - 1][1]]
                    # A capitalised name must look like a name in the text ("Will", not "will").
                    if surface.casefold() not in self.lowercase and shown[0].islower():
                        continue
                    hit = Match(
                        tokens[i][0] + offset, tokens[i + n - 1][1] + offset, self.surfaces[surface], shown
                    )
                    i += n
                    break
                if hit is None:
                    i += 1
                else:
                    found.append(hit)
        if cjk:
            i = 0
            while i < len(text):
                for n in range(min(max_chars, len(text) - i), 0, -1):
                    surface = cjk.get(text[i : i + n].casefold())
                    if surface is not None:
                        found.append(
                            Match(i + offset, i + n + offset, self.surfaces[surface], text[i : i + n])
                        )
                        i += n
                        break
                else:
                    i += 1
        found.sort(key=lambda m: (m.start, -(m.end - m.start)))
        result: list[Match] = []
        for match in found:
            if not result or match.start >= result[-1].end:
                result.append(match)
        return result

    def resolve(self, text_or_name: str | None) -> list[str]:
        """Entity ids named in `text_or_name`: an exact name or alias first, else every match inside it."""
        if not text_or_name or not str(text_or_name).strip():
            return []
        cleaned = " ".join(str(text_or_name).split())
        for candidate in (cleaned, _ARTICLE.sub("", cleaned), cleaned.strip(" .,:;!?\"'“”‘’()（）：")):
            entity_id = self.surfaces.get(candidate.casefold())
            if entity_id is not None:
                return [entity_id]
        return _unique(m.entity_id for m in self.find_mentions(cleaned))

    def resolve_one(self, text_or_name: str | None) -> str | None:
        """The first entity id named in `text_or_name`, or None."""
        ids = self.resolve(text_or_name)
        return ids[0] if ids else None

    def name(self, entity_id: str) -> str:
        """The display name of an entity id (the id itself when unknown)."""
        return self.names.get(entity_id, entity_id)


def resolve_names(text_or_name: str | None, entities: pd.DataFrame | Iterable[dict[str, Any]]) -> list[str]:
    """Entity ids that `text_or_name` names (name or alias; longest match first), in order of appearance."""
    return EntityLexicon.from_entities(entities).resolve(text_or_name)


def _surfaces(row: dict[str, Any]) -> list[str]:
    aliases = row.get("aliases")
    values = [str(row["name"])] + [str(a) for a in (list(aliases) if aliases is not None else [])]
    out: list[str] = []
    for value in values:
        value = " ".join(value.split())
        for surface in (value, _ARTICLE.sub("", value)):
            if len(surface) >= 2 or CJK_CHAR.search(surface):
                out.append(surface)
    return _unique(out)


def _first_owner(rows: list[dict[str, Any]], ids: set[str]) -> str:
    for row in rows:
        if str(row["entity_id"]) in ids:
            return str(row["entity_id"])
    return sorted(ids)[0]


def _unique(values: Iterable[str]) -> list[str]:
    seen: dict[str, None] = {}
    for value in values:
        seen.setdefault(value, None)
    return list(seen)
