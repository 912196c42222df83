"""A name lexicon for grounding: surface forms -> raw entity, found in chunk text as spans.

English surfaces match on word boundaries, longest first, under a case policy per surface:
proper names match when capitalised ("JOHN", "John"), common-noun speakers ("WAITRESS")
only in capitals, objects and places in any case. Chinese surfaces match as substrings,
longest first, so "程勇爸爸" is never read as "程勇".
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache

from tasks.graph.upsert import EntityKey, claim_spans

PROPER, CAPS, ANY = "proper", "caps", "any"
# No name is this long (the reply schemas cap names at 120 characters, but not every alias or
# participant): a longer surface is not registered, since the trie and its pattern grow with the
# square of a surface's length (a 5 MB alias in a reply took minutes).
MAX_SURFACE_CHARS = 200


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
        if len(surface) > 4 * MAX_SURFACE_CHARS:  # before the whitespace collapse copies it
            return
        key = self._match_key(surface)
        if not (1 if self.language == "zh" else 2) <= len(key) <= MAX_SURFACE_CHARS or key in self.entries:
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
            self._pattern = _surface_pattern(self.language, tuple(sorted(self.entries)))
        return self._pattern

    def _entry_for(self, surface: str) -> tuple[EntityKey, str]:
        """The entry of a matched surface. Case-blind matching pairs a few letters that case
        folding keeps apart ("I" matches "ı" of a Turkish name, yet folds to "i"): such a match
        is traced back to the first surface, in the pattern's order, that matches it whole."""
        entry = self.entries.get(self._match_key(surface))
        if entry is not None:
            return entry
        matching = [k for k in self.entries if _surface_pattern(self.language, (k,)).fullmatch(surface)]
        return self.entries[min(matching, key=_trie_order)]

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
            entity_key, policy = self._entry_for(surface)
            if self.language == "zh":
                if len(surface) < min_zh_length:
                    continue
            elif policy == PROPER and not surface[0].isupper():
                continue
            elif policy == CAPS and not surface.isupper():
                continue
            found.append((offset + match.start(), offset + match.end(), entity_key))
        return claim_spans(found)


@lru_cache(maxsize=2048)
def _surface_pattern(language: str, surfaces: tuple[str, ...]) -> re.Pattern[str]:
    """The compiled pattern of a set of surfaces: the per-chunk lexicons of an LLM extraction
    repeat the same few names scene after scene, and compiling is most of a small lexicon's cost."""
    body = surface_trie(list(surfaces))
    if language == "zh":
        return re.compile(f"(?:{body})")
    return re.compile(rf"(?<![\w'’\-])(?:{body})(?![\w\-]|['’][a-rt-z])", re.IGNORECASE)


def _trie_order(key: str) -> tuple[int, ...]:
    """The order in which `surface_trie`'s pattern tries surfaces: by character, and a surface
    after every longer one it begins (its end sorts after any character)."""
    return (*map(ord, key), sys.maxunicode + 1)


def surface_trie(surfaces: list[str]) -> str:
    """A regular expression matching any of `surfaces` (a space matches any run of whitespace), the
    longest first at each position: what the alternation of the surfaces sorted longest first
    matches, found about five times faster over a long text, since the engine follows one branch
    of shared prefixes instead of trying every surface at every position."""
    root: dict[str, dict] = {}
    for surface in surfaces:
        node = root
        for char in surface:
            node = node.setdefault(char, {})
        node[""] = {}  # a surface ends here

    def atom(char: str) -> str:
        return r"\s+" if char == " " else re.escape(char)

    def branch(node: dict[str, dict]) -> str:
        alternatives = []
        for char in sorted(c for c in node if c):
            chain, child = atom(char), node[char]
            while "" not in child and len(child) == 1:  # one way on: a literal run, not a nested group
                (char,) = child
                chain, child = chain + atom(char), child[char]
            alternatives.append(chain + branch(child))
        if not alternatives:
            return ""
        body = alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"
        # Greedy: a longer surface through this node is tried before the one ending here.
        return f"(?:{body})?" if "" in node else body

    return branch(root)
