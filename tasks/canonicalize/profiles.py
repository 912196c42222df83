"""What canonicalization knows about each raw entity, and which pairs it compares.

A profile carries the name split into title and tokens, gender evidence (titles, and
pronouns that follow a sentence-opening mention) and the sections where the entity is
mentioned. Candidate pairs are blocked by type and shared name keys (tokens, 4-letter
prefixes, Chinese surnames and kinship suffixes) and bounded per entity: no all-pairs pass.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import pandas as pd
from rapidfuzz import fuzz

from tasks.graph.names import TITLES, ZH_FAMILIAR_PREFIXES, ZH_RELATION_NOUNS, NameParts, is_cjk, name_parts
from tasks.text import STOPWORDS_EN

_SENTENCE_START = re.compile(r"(?:^|[.!?…]\s+|\n\s*)$")
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’]?(?:\s|$)|\n")
# "his sister", "her boss": a possessive before a relation noun points at the other person.
_POSSESSIVE = re.compile(
    r"\b(?:his|her)\b(?!\s+(?:[a-z\-]+\s+)?(?:sister|brother|wife|husband|mother|father|son|daughter|"
    r"friend|boss|assistant|partner|girlfriend|boyfriend|colleague|lover|aunt|uncle|niece|nephew|"
    r"cousin|fiance|fiancee|employer|master|mistress)\b)"
)
_OPENER = re.compile(r"\s*(He|She|His|Her)\b")
WINDOW = 200
# Places and things that share a word but little else ("Car" / "Car Park Roof") are not candidates;
# characters are compared whatever their spelling ("Maggie" / "Margaret").
MIN_PLACE_SIMILARITY = 0.6
_CUE_REST = re.compile(r"[ \t]*(?:\([^)\n]*\)[ \t]*)*\^?[ \t]*(?:\n|$)")


@dataclass(frozen=True)
class Profile:
    """What canonicalization knows about one raw entity."""

    raw_id: str
    name: str
    entity_type: str
    key: str  # normalized name
    parts: NameParts
    n_mentions: int
    is_proxy: bool
    gender: str | None
    sections: frozenset[str]
    is_zh: bool


def profile_entities(
    raw_entities: pd.DataFrame, raw_mentions: pd.DataFrame, chunks: pd.DataFrame
) -> dict[str, Profile]:
    """Profiles keyed by raw id: name parts, gender evidence from pronouns after mentions, sections."""
    chunk_text = {c.chunk_id: (int(c.char_start), c.text, c.section_id) for c in chunks.itertuples()}
    votes: dict[str, Counter] = defaultdict(Counter)
    sections: dict[str, set[str]] = defaultdict(set)
    columns = ("raw_entity_id", "chunk_id", "char_start", "char_end", "surface")
    for raw_id, chunk_id, char_start, char_end, surface in zip(*(raw_mentions[c].tolist() for c in columns)):
        start, text, section_id = chunk_text[chunk_id]
        sections[raw_id].add(section_id)
        found = _pronoun_votes(text, char_start - start, char_end - start, surface)
        if found:
            votes[raw_id].update(found)
    parts = {e.raw_entity_id: name_parts(e.name) for e in raw_entities.itertuples()}
    _pool_first_name_votes(raw_entities, parts, votes)
    profiles = {}
    for e in raw_entities.itertuples():
        zh = is_cjk(e.name)
        profiles[e.raw_entity_id] = Profile(
            e.raw_entity_id,
            e.name,
            e.entity_type,
            e.name if zh else " ".join(parts[e.raw_entity_id].tokens),
            parts[e.raw_entity_id],
            int(e.n_mentions),
            bool(e.is_proxy),
            parts[e.raw_entity_id].gender or _gender(votes[e.raw_entity_id]),
            frozenset(sections[e.raw_entity_id]),
            zh,
        )
    return profiles


def _pronoun_votes(text: str, start: int, end: int, surface: str) -> Counter:
    """Gender evidence of one mention that opens a sentence: a possessive later in the same
    sentence ("Nia stands on the verge with her bicycle") counts twice, a pronoun opening the
    next sentence ("She takes the key") once. Anything else is too often about someone else."""
    votes: Counter = Counter()
    if not _SENTENCE_START.search(text[max(0, start - 3) : start]) and start != 0:
        return votes
    rest = text[end : end + WINDOW].split("\n\n", 1)[0]
    if surface.isupper() and _CUE_REST.match(rest):
        return votes  # a character cue: what follows is the speaker's own lines
    boundary = _SENTENCE_END.search(rest)
    sentence, after = (rest[: boundary.end()], rest[boundary.end() :]) if boundary else (rest, "")
    for match in _POSSESSIVE.finditer(sentence):
        votes["m" if match.group(0) == "his" else "f"] += 2
    opener = _OPENER.match(after)
    if opener:
        votes["m" if opener.group(1) in ("He", "His") else "f"] += 1
    return votes


def _pool_first_name_votes(
    raw_entities: pd.DataFrame, parts: dict[str, NameParts], votes: dict[str, Counter]
) -> None:
    """A full name introduced once ("MARGARET HALE (60s)") borrows the pronoun evidence of its
    first name ("Margaret") when no other full name starts with it."""
    characters = raw_entities[raw_entities["entity_type"] == "character"]["raw_entity_id"].tolist()
    fulls: dict[str, list[str]] = defaultdict(list)
    singles: dict[str, str] = {}
    for raw_id in characters:
        p = parts[raw_id]
        if p.title is None and p.is_full:
            fulls[p.first].append(raw_id)
        elif p.title is None and len(p.tokens) == 1:
            singles[p.tokens[0]] = raw_id
    for first, ids in fulls.items():
        if len(ids) == 1 and first in singles:
            votes[ids[0]].update(votes[singles[first]])


def _gender(votes: Counter) -> str | None:
    male, female = votes["m"], votes["f"]
    if male >= 1 and male >= 2 * female:
        return "m"
    if female >= 1 and female >= 2 * male:
        return "f"
    return None


# -- blocking ------------------------------------------------------------------------------


def block_keys(profile: Profile) -> set[str]:
    """Keys that make two entities of one type worth comparing."""
    if profile.is_zh:
        name = profile.name
        keys = {"n:" + name}
        core = name[1:] if name.startswith(ZH_FAMILIAR_PREFIXES) and len(name) == 2 else name
        keys.add("s:" + core[0])
        if len(name) == 3:
            keys.add("n:" + name[1:])
        keys.update("r:" + noun for noun in ZH_RELATION_NOUNS if name.endswith(noun))
        if profile.entity_type != "character" and len(name) >= 3:
            keys.add("e:" + name[-2:])  # "王子神油店" / "神油店"
        return keys
    keys = set()
    tokens = profile.parts.tokens
    for token in tokens:
        if (
            len(token) >= 2
            and token not in STOPWORDS_EN
            and token not in TITLES
            and not token.endswith(("'s", "’s"))
        ):
            keys.add("t:" + token)
            if len(token) >= 4:
                keys.add("p:" + token[:4])
    if profile.entity_type == "character" and len(tokens) == 1 and len(tokens[0]) >= 3:
        keys.add("f:" + tokens[0][:2])  # nicknames ("Maggie" / "Margaret") reach the LLM as candidates
    return keys


def candidate_pairs(profiles: dict[str, Profile], max_candidates: int) -> list[tuple[str, str, float]]:
    """Blocked candidate pairs (left < right) with a name similarity, at most `max_candidates` per entity."""
    blocks: dict[tuple[str, str], list[str]] = defaultdict(list)
    for raw_id, profile in sorted(profiles.items()):
        for key in block_keys(profile):
            blocks[(profile.entity_type, key)].append(raw_id)
    limit = 4 * max_candidates
    neighbours: dict[str, set[str]] = defaultdict(set)
    for members in blocks.values():
        if len(members) <= limit:
            for raw_id in members:
                neighbours[raw_id].update(m for m in members if m != raw_id)
            continue
        # A key shared by many entities ("agent", a common surname): sorted-neighbourhood window only.
        ordered = sorted(members, key=lambda m: (profiles[m].key, m))
        for i, raw_id in enumerate(ordered):
            for other in ordered[i + 1 : i + 1 + max_candidates]:
                neighbours[raw_id].add(other)
                neighbours[other].add(raw_id)
    pairs: dict[tuple[str, str], float] = {}
    for raw_id, others in neighbours.items():
        floor = 0.0 if profiles[raw_id].entity_type == "character" else MIN_PLACE_SIMILARITY
        scored = sorted(
            ((similarity(profiles[raw_id], profiles[o]), o) for o in others), key=lambda so: (-so[0], so[1])
        )
        scored = [(score, other) for score, other in scored if score >= floor]
        for score, other in scored[:max_candidates]:
            pairs[tuple(sorted((raw_id, other)))] = score
    return [(a, b, s) for (a, b), s in sorted(pairs.items())]


def similarity(a: Profile, b: Profile) -> float:
    return round(fuzz.ratio(a.key, b.key) / 100.0, 4)
