"""A name lexicon for grounding: surface forms -> raw entity, found in chunk text as spans.

English surfaces match on word boundaries, longest first, under a case policy per surface:
proper names match when capitalised ("JOHN", "John"), common-noun speakers ("WAITRESS")
only in capitals, objects and places in any case. Chinese surfaces match as substrings,
longest first, so "程勇爸爸" is never read as "程勇".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tasks.graph.upsert import EntityKey, claim_spans

PROPER, CAPS, ANY = "proper", "caps", "any"


@dataclass
class Lexicon:
    language: str
    entries: dict[str, tuple[EntityKey, str]] = field(default_factory=dict)  # match key -> (entity, policy)
    _pattern: re.Pattern[str] | None = None

    def _match_key(self, surface: str) -> str:
        text = " ".join(surface.split())
        return text if self.language == "zh" else text.casefold()

    def add(self, surface: str, entity_key: EntityKey, policy: str = PROPER) -> None:
        """Register a surface; the first registration of a surface wins (callers add the surest first)."""
        key = self._match_key(surface)
        if len(key) < (1 if self.language == "zh" else 2) or key in self.entries:
            return
        self.entries[key] = (entity_key, policy)
        self._pattern = None

    def __contains__(self, surface: str) -> bool:
        return self._match_key(surface) in self.entries

    def get(self, surface: str) -> EntityKey | None:
        entry = self.entries.get(self._match_key(surface))
        return entry[0] if entry else None

    def _compiled(self) -> re.Pattern[str] | None:
        if self._pattern is None and self.entries:
            surfaces = sorted(self.entries, key=lambda s: (-len(s), s))
            parts = [r"\s+".join(re.escape(p) for p in s.split(" ")) for s in surfaces]
            body = "|".join(parts)
            if self.language == "zh":
                self._pattern = re.compile(f"(?:{body})")
            else:
                self._pattern = re.compile(rf"(?<![\w'’\-])(?:{body})(?![\w\-]|['’][a-rt-z])", re.IGNORECASE)
        return self._pattern

    def find_spans(
        self, text: str, offset: int = 0, min_zh_length: int = 2
    ) -> list[tuple[int, int, EntityKey]]:
        """Non-overlapping (start, end, entity) matches in `text`, positions shifted by `offset`."""
        pattern = self._compiled()
        if pattern is None:
            return []
        found: list[tuple[int, int, EntityKey]] = []
        for match in pattern.finditer(text):
            surface = match.group(0)
            entity_key, policy = self.entries[self._match_key(surface)]
            if self.language == "zh":
                if len(surface) < min_zh_length:
                    continue
            elif policy == PROPER and not surface[0].isupper():
                continue
            elif policy == CAPS and not surface.isupper():
                continue
            found.append((offset + match.start(), offset + match.end(), entity_key))
        return claim_spans(found)
