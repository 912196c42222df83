"""Narrative units (events, interactions, occasions) in one shape, in source order, for the
narrative-hierarchy stages; plus the small cue-word lexicons their offline heuristics read.

Cue words stand in for what an LLM would read from the text: they are only ever combined
with structural evidence (shared participants, order, explicit unit links), never used alone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from tasks.text import CJK_CHAR, normalize_space

CHARACTER_TYPES = frozenset({"character", "group"})
STAKE_TYPES = frozenset({"object", "concept", "institution"})  # what goals and conflicts are about
CONFLICT_INTERACTIONS = frozenset({"threaten", "confront", "attack", "accuse", "refuse", "deceive", "hide"})
_KIND_RANK = {"occasion": 0, "event": 1, "interaction": 2}  # an occasion opens its section

CUES: dict[str, dict[str, tuple[str, ...]]] = {
    "causal": {
        # Bare "so" and "since" are left out: in dialogue they are mostly fillers or time words.
        "en": (
            "because",
            "therefore",
            "as a result",
            "in response",
            "due to",
            "leads to",
            "led to",
            "causes",
            "caused",
            "forces",
            "forced",
            "consequently",
            "thanks to",
            "in order to",
            "so that",
            "prompting",
        ),
        "zh": (
            "因为",
            "所以",
            "于是",
            "因此",
            "导致",
            "结果",
            "由于",
            "为了",
            "使得",
            "害得",
            "逼得",
            "只好",
        ),
    },
    "goal": {
        "en": (
            "wants",
            "want to",
            "plans",
            "plan to",
            "tries",
            "try to",
            "decides",
            "decide",
            "must",
            "needs to",
            "intends",
            "hopes",
            "aims",
            "determined",
            "resolves to",
            "sets out",
            "promises",
            "agrees to",
            "goal",
        ),
        "zh": ("想要", "打算", "决定", "计划", "试图", "必须", "希望", "答应", "目标", "设法"),
    },
    "conflict": {
        "en": (
            "argue",
            "argues",
            "fight",
            "fights",
            "refuse",
            "refuses",
            "against",
            "threat",
            "threatens",
            "confront",
            "confronts",
            "accuse",
            "accuses",
            "lie",
            "lies",
            "deceive",
            "deceives",
            "attack",
            "attacks",
            "quarrel",
            "betray",
            "betrays",
            "hide",
            "hides",
            "conflict",
            "rival",
            "oppose",
            "opposes",
        ),
        "zh": ("争吵", "冲突", "威胁", "拒绝", "欺骗", "对抗", "指责", "隐瞒", "背叛", "打架", "反对", "吵"),
    },
    "resolution": {
        "en": (
            "finally",
            "resolve",
            "resolves",
            "reconcile",
            "reconciles",
            "forgive",
            "forgives",
            "returns",
            "saves",
            "rescues",
            "admits",
            "confesses",
            "apologises",
            "apologizes",
            "at last",
            "ends",
            "restores",
            "settles",
        ),
        "zh": ("终于", "和好", "原谅", "解决", "救出", "承认", "结束", "道歉", "坦白", "归还", "团聚"),
    },
    "obstruction": {
        "en": (
            "prevent",
            "prevents",
            "stop",
            "stops",
            "block",
            "blocks",
            "refuse",
            "refuses",
            "deny",
            "denies",
            "lock",
            "locks",
            "hide",
            "hides",
            "forbid",
            "forbids",
            "delay",
            "delays",
            "sabotage",
            "withhold",
            "withholds",
        ),
        "zh": ("阻止", "阻挠", "拒绝", "禁止", "隐瞒", "拖延", "破坏", "扣下", "不让"),
    },
    "flashback": {
        "en": (
            "flashback",
            "years ago",
            "years earlier",
            "years before",
            "earlier that",
            "previously",
            "in the past",
            "remembers",
            "recalls",
            "memory of",
            "as a child",
            "long ago",
        ),
        "zh": ("回忆", "闪回", "多年前", "当年", "以前", "小时候", "往事", "想起"),
    },
}


def _cue_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(
        r"\b(?:" + "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) + r")\b",
        re.IGNORECASE,
    )


_EN_PATTERNS = {kind: _cue_pattern(words["en"]) for kind, words in CUES.items()}
# Quoted speech: a character saying "because" is not the narration stating a cause.
_QUOTED = re.compile(r"“[^”]*”|\"[^\"]*\"|「[^」]*」|『[^』]*』")


def has_cue(text: str | None, kind: str) -> bool:
    """Whether the narration in `text` (quoted speech removed) has a cue word of `kind` (English
    words or Chinese substrings)."""
    if not text:
        return False
    text = _QUOTED.sub(" ", text)
    if CJK_CHAR.search(text) and any(w in text for w in CUES[kind]["zh"]):
        return True
    return bool(_EN_PATTERNS[kind].search(text))


def string_list(value: Any) -> list[str]:
    """A list-valued cell (list, numpy array, None or NaN) as a list of non-empty strings."""
    if value is None:
        return []
    if isinstance(value, float):
        return []
    if isinstance(value, (list, tuple, np.ndarray)):
        return [str(v) for v in value if v is not None and str(v) != ""]
    return [str(value)] if str(value) else []


def as_text(value: Any) -> str:
    """A nullable string cell as a single-spaced string ('' for null)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    return normalize_space(str(value))


@dataclass(frozen=True)
class Unit:
    unit_id: str
    kind: str  # event | interaction | occasion
    index: int  # position in source order
    ordinal: int  # ordinal of the section the unit is anchored in
    section_id: str
    char_start: int
    participants: tuple[str, ...]  # entity ids, interaction subject first
    setting_id: str | None
    description: str
    unit_type: str  # event_type / interaction_type / occasion_type
    event_id: str | None  # an interaction's event
    occasion_ids: tuple[str, ...]
    section_ids: tuple[str, ...]  # sections the unit covers (several for an occasion)
    time_cue: str = ""  # an event's time cue ("years earlier", "that night"), else ""
    char_end: int = -1  # end of an event's or interaction's source span (-1: an occasion has none)


def _dedupe(ids: Iterable[str], known: Mapping[str, Any]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for i in ids:
        if i in known and i not in seen:
            seen[i] = None
    return tuple(seen)


def load_units(
    sections: pd.DataFrame,
    entities: pd.DataFrame,
    events: pd.DataFrame,
    interactions: pd.DataFrame,
    occasions: pd.DataFrame,
) -> list[Unit]:
    """Every event, interaction and occasion of one document as a Unit, sorted in source order."""
    ordinal = {str(r.section_id): int(r.ordinal) for r in sections.itertuples()}
    first_section = min(ordinal, key=lambda s: (ordinal[s], s)) if ordinal else ""
    known = {str(e): None for e in entities["entity_id"]} if len(entities) else {}
    drafts: list[dict[str, Any]] = []
    occasions_by_section: dict[str, list[tuple[str, frozenset[str], str | None]]] = defaultdict(list)
    linked_sections: dict[str, list[str]] = defaultdict(list)  # occasion -> sections of interactions in it
    for r in interactions.itertuples():
        if as_text(r.occasion_id):
            linked_sections[str(r.occasion_id)].append(str(r.section_id))
    for r in occasions.itertuples():
        covered = (
            [s for s in string_list(r.section_ids) if s in ordinal]
            or [s for s in linked_sections.get(str(r.occasion_id), []) if s in ordinal]
            or [first_section]
        )
        covered = sorted(set(covered), key=lambda s: (ordinal.get(s, 0), s))
        people = _dedupe(string_list(r.participant_ids), known)
        setting = as_text(r.setting_id) or None
        for s in covered:
            occasions_by_section[s].append((str(r.occasion_id), frozenset(people), setting))
        # An occasion is anchored where it starts; spanning occasions still count as shared context later.
        drafts.append(
            dict(
                unit_id=str(r.occasion_id),
                kind="occasion",
                section_id=covered[0],
                char_start=-1,
                participants=people,
                setting_id=setting if setting in known else None,
                description=as_text(r.description),
                unit_type=as_text(r.occasion_type),
                event_id=None,
                occasion_ids=(str(r.occasion_id),),
                section_ids=tuple(covered),
            )
        )
    for r in events.itertuples():
        people = _dedupe(string_list(r.participant_ids), known)
        setting = as_text(r.setting_id) or None
        section = str(r.section_id)
        # Events carry no occasion id: they belong to the occasions of their section they share
        # people or place with.
        context = tuple(
            o
            for o, members, place in occasions_by_section.get(section, [])
            if (members & set(people)) or (setting is not None and place == setting)
        )
        drafts.append(
            dict(
                unit_id=str(r.event_id),
                kind="event",
                section_id=section,
                char_start=int(r.char_start),
                char_end=int(r.char_end),
                participants=people,
                setting_id=setting if setting in known else None,
                description=as_text(r.description),
                unit_type=as_text(r.event_type),
                event_id=None,
                occasion_ids=context,
                section_ids=(section,),
                time_cue=as_text(r.time_cue),
            )
        )
    for r in interactions.itertuples():
        people = _dedupe([as_text(r.subject_id)] + string_list(r.object_ids), known)
        occasion = as_text(r.occasion_id)
        drafts.append(
            dict(
                unit_id=str(r.interaction_id),
                kind="interaction",
                section_id=str(r.section_id),
                char_start=int(r.char_start),
                char_end=int(r.char_end),
                participants=people,
                setting_id=None,
                description=as_text(r.description),
                unit_type=as_text(r.interaction_type),
                event_id=as_text(r.event_id) or None,
                occasion_ids=(occasion,) if occasion else (),
                section_ids=(str(r.section_id),),
            )
        )
    drafts = [d for d in drafts if d["section_id"] in ordinal]
    drafts.sort(
        key=lambda d: (ordinal[d["section_id"]], _KIND_RANK[d["kind"]], d["char_start"], d["unit_id"])
    )
    return [Unit(index=i, ordinal=ordinal[d["section_id"]], **d) for i, d in enumerate(drafts)]


def conflict_pair(unit: Unit) -> frozenset[str] | None:
    """The two sides of a conflict interaction (threaten, confront, ...), else None."""
    if unit.kind == "interaction" and unit.unit_type in CONFLICT_INTERACTIONS and len(unit.participants) >= 2:
        return frozenset(unit.participants[:2])
    return None


def entity_types(entities: pd.DataFrame) -> dict[str, str]:
    """entity_id -> entity_type."""
    return {str(r.entity_id): str(r.entity_type) for r in entities.itertuples()}


def entity_names(entities: pd.DataFrame) -> dict[str, str]:
    """entity_id -> display name."""
    return {str(r.entity_id): as_text(r.name) or str(r.entity_id) for r in entities.itertuples()}
