"""Offline character states (paper appendix D.2, deterministic): per scene, the candidate
characters grounded there, and observable states taken from the source itself: action
sentences whose first named character is the one described, the character's parentheticals,
and what surrounds its cues (an English cue's extension such as V.O.; the manner words a
Chinese cue carries before its colon). Every state is a span of its scene."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from schemas.ids import make_id
from tasks.continuity.scenes import Scene, SceneGraph
from tasks.ingest.screenplay import Block, parse_blocks
from tasks.tables.io import as_list

METHOD = "offline"
MAX_STATE_CHARS = 200
MAX_EVIDENCE_CHARS = 400
SENTENCE = re.compile(r"[^.!?。！？]+[.!?。！？]*")
KIND_STEMS = {
    "posture": (
        "sit",
        "sat",
        "stand",
        "stood",
        "kneel",
        "knelt",
        "lean",
        "lie",
        "lies",
        "lying",
        "lay",
        "crouch",
        "slump",
        "hunch",
        "perch",
        "sprawl",
        "坐",
        "站",
        "躺",
        "靠",
        "蹲",
        "跪",
        "趴",
    ),
    "expression": (
        "smil",
        "grin",
        "frown",
        "stare",
        "glare",
        "cry",
        "cries",
        "weep",
        "laugh",
        "sigh",
        "blush",
        "wince",
        "nod",
        "shrug",
        "scowl",
        "gaze",
        "笑",
        "哭",
        "皱眉",
        "盯",
        "叹",
        "一脸",
        "瞪",
        "泪",
        "愣",
    ),
    "tone": (
        "shout",
        "whisper",
        "mutter",
        "yell",
        "scream",
        "murmur",
        "snap",
        "sob",
        "v.o",
        "o.s",
        "o.c",
        "喊",
        "叫",
        "低声",
        "大声",
        "吼",
        "嘟囔",
    ),
    "appearance": ("wear", "wore", "dressed", "soaked", "drenched", "bloodied", "穿", "戴", "湿透"),
}
EXTENSIONS = {"V.O.": "heard in voice-over", "O.S.": "heard off screen", "O.C.": "heard off camera"}


@dataclass(frozen=True)
class Character:
    entity_id: str
    name: str
    surfaces: tuple[str, ...]  # longest first


def state_kind(text: str, default: str = "action") -> str:
    """The observable kind of a state from its words (posture, expression, tone, look) else `default`."""
    lowered = text.lower()
    words = re.findall(r"[a-z.']+", lowered)
    for kind, stems in KIND_STEMS.items():
        for stem in stems:
            if (stem.isascii() and any(w.startswith(stem) for w in words)) or (
                not stem.isascii() and stem in text
            ):
                return kind
    return default


def candidates(graph: SceneGraph, scene: Scene, mentions: dict[str, Counter], limit: int) -> list[Character]:
    """The scene's grounded characters, most mentioned first (ties by name)."""
    counts = mentions.get(scene.section_id, Counter())
    chosen = [e for e in scene.grounded if graph.kind(e) == "character"]
    chosen.sort(key=lambda e: (-counts[e], graph.name(e), e))
    out = []
    for entity_id in chosen[:limit]:
        row = graph.entities[entity_id]
        # Its name, aliases and the surfaces its mentions have in this scene (TOM, Tom, Mrs. Hale ...).
        names = {graph.name(entity_id), *as_list(row.get("aliases")), *scene.surfaces.get(entity_id, ())}
        out.append(
            Character(
                entity_id,
                graph.name(entity_id),
                tuple(sorted({n for n in names if n and n.strip()}, key=lambda n: (-len(n), n))),
            )
        )
    return out


def _pattern(character: Character, language: str) -> re.Pattern[str]:
    alternation = "|".join(re.escape(s) for s in character.surfaces)
    return re.compile(alternation if language == "zh" else rf"\b(?:{alternation})\b", re.IGNORECASE)


def _first_named(text: str, patterns: dict[str, re.Pattern[str]]) -> str | None:
    hits = [(m.start(), entity_id) for entity_id, p in patterns.items() if (m := p.search(text))]
    return min(hits)[1] if hits else None


def _owner(speaker: str | None, patterns: dict[str, re.Pattern[str]]) -> tuple[str | None, int]:
    """The character a cue names, and where its name ends in the cue text."""
    if not speaker:
        return None, 0
    for entity_id, pattern in patterns.items():
        match = pattern.match(speaker.strip())
        if match:
            return entity_id, match.end()
    return None, 0


def scene_states(
    graph: SceneGraph, scene: Scene, text: str, language: str, characters: list[Character], per_character: int
) -> list[dict[str, Any]]:
    """Observable states of the candidate characters in one scene, in source order."""
    patterns = {c.entity_id: _pattern(c, language) for c in characters}
    end = scene.char_start + len(scene.text)
    found: list[tuple[int, int, str, str, str]] = []  # start, end, entity, state, kind
    for block in parse_blocks(text, scene.char_start, end, language):
        found.extend(_block_states(block, text, patterns, language))
    counts: Counter = Counter()
    rows: list[dict[str, Any]] = []
    for start, stop, entity_id, state, kind in sorted(found):
        if counts[entity_id] >= per_character:
            continue
        counts[entity_id] += 1
        stop = min(stop, start + MAX_EVIDENCE_CHARS)
        rows.append(
            {
                "state_id": make_id("cstate", graph.doc_id, scene.section_id, entity_id, start, stop),
                "doc_id": graph.doc_id,
                "section_id": scene.section_id,
                "entity_id": entity_id,
                "state": state[:MAX_STATE_CHARS],
                "state_kind": kind,
                "evidence": text[start:stop],
                "char_start": start,
                "char_end": stop,
                "round": 1,
                "accepted": True,
                "method": METHOD,
            }
        )
    return rows


def _block_states(
    block: Block, text: str, patterns: dict[str, re.Pattern[str]], language: str
) -> list[tuple]:
    body = text[block.start : block.end]
    if block.kind == "action":
        out = []
        for match in SENTENCE.finditer(body):
            sentence = match.group(0).strip()
            owner = _first_named(sentence, patterns) if sentence else None
            if owner is None:
                continue
            start = block.start + match.start() + (len(match.group(0)) - len(match.group(0).lstrip()))
            out.append(
                (start, start + len(sentence), owner, " ".join(sentence.split()), state_kind(sentence))
            )
        return out
    if block.kind == "parenthetical":
        owner, _ = _owner(block.speaker, patterns)
        words = body.strip().strip("()（）").strip()
        return [(block.start, block.end, owner, words, state_kind(words, "tone"))] if owner and words else []
    if block.kind == "cue":
        owner, name_end = _owner(block.speaker, patterns)
        if owner is None:
            return []
        if language == "zh":
            manner = (block.speaker or "")[name_end:].strip()
            return (
                [(block.start, block.end, owner, manner, state_kind(manner, "expression"))] if manner else []
            )
        extension = (block.extension or "").upper()
        label = next((v for k, v in EXTENSIONS.items() if k in extension), None)
        return [(block.start, block.end, owner, label, "tone")] if label else []
    return []


def offline_states(
    graph: SceneGraph,
    text: str,
    language: str,
    mentions: dict[str, Counter],
    max_characters: int,
    per_character: int,
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for scene in graph.scenes:
        characters = candidates(graph, scene, mentions, max_characters)
        if characters:
            rows.extend(scene_states(graph, scene, text, language, characters, per_character))
    return rows
