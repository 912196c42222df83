"""Who speaks a line of dialogue and to whom, and the sentence that describes it.

A screenplay turn's speaker comes from its cue, its addressees from a "(to X)" parenthetical,
a name called in the lines (a vocative) or the turn alternation of the scene so far. Separate
from the scene walk in `screenplay_units` because these rules read only a turn and the scene's
state; the vocative patterns and the interaction sentence are shared with `prose_units`.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from tasks.ingest.screenplay import Block
from tasks.narrative.inputs import AGENT_TYPES, NarrativeInputs, join_names

TO_ADDRESSEE = re.compile(
    r"^\(\s*(?:to|at|toward|towards|into phone to)\s+(?P<who>[^)]+?)\s*\)$", re.IGNORECASE
)
TO_SELF = re.compile(
    r"^\(\s*(?:to (?:him|her|them)sel(?:f|ves)|aside|reading|singing|into (?:the )?(?:phone|radio))",
    re.IGNORECASE,
)
VOCATIVE_BEFORE = re.compile(
    r"(?:^|[,.!?;:—–\-]\s*|\b(?:hey|oh|hi|hello|listen|look|well|yes|no|thanks)\s+)$", re.IGNORECASE
)
VOCATIVE_AFTER = re.compile(r"^\s*(?:[,.!?;:—–]|$)")
ZH_VOCATIVE_BEFORE = re.compile(r"(?:^|[，,。！!？?：:…])\s*$")
ZH_VOCATIVE_AFTER = re.compile(r"^\s*(?:[，,。！!？?：:…]|$)")

EN_VERB = {
    "ask": "asks",
    "answer": "answers",
    "inform": "tells",
    "warn": "warns",
    "deceive": "deceives",
    "help": "helps",
    "threaten": "threatens",
    "persuade": "urges",
    "hide": "hides something from",
    "request": "asks a favour of",
    "command": "orders",
    "refuse": "refuses",
    "accuse": "accuses",
    "comfort": "reassures",
    "attack": "attacks",
    "give": "gives something to",
    "greet": "greets",
    "confront": "confronts",
    "other": "addresses",
}
ZH_VERB = {
    "ask": "问",
    "answer": "回答",
    "inform": "对{o}说",
    "warn": "警告",
    "deceive": "欺骗",
    "help": "帮助",
    "threaten": "威胁",
    "persuade": "劝说",
    "hide": "向{o}隐瞒",
    "request": "请求",
    "command": "命令",
    "refuse": "拒绝",
    "accuse": "指责",
    "comfort": "安慰",
    "attack": "攻击",
    "give": "交给",
    "greet": "问候",
    "confront": "对质",
    "other": "对{o}说",
}


def interaction_description(subject: str, objects: list[str], kind: str, line: str, language: str) -> str:
    """A readable sentence for a dialogue interaction: who does what to whom, with the line."""
    quote = line if len(line) <= 160 else line[:159].rstrip() + "…"
    if language == "zh":
        verb = ZH_VERB.get(kind, ZH_VERB["other"])
        target = join_names(objects, "zh")
        head = f"{subject}{verb.format(o=target)}" if "{o}" in verb else f"{subject}{verb}{target}"
        return f"{head}：“{quote}”"
    return f"{subject} {EN_VERB.get(kind, 'addresses')} {join_names(objects, 'en')}: \u201c{quote}\u201d"


@dataclass
class SceneState:
    """What a scene has shown so far: speakers in turn order, who is present, the last turn."""

    speakers: list[str] = field(default_factory=list)
    present: Counter = field(default_factory=Counter)
    last_turn: tuple[str, list[str], str] | None = None  # (speaker, addressees, type)
    gone: set[str] = field(default_factory=set)  # characters whose departure the action lines showed


def resolve_speaker(inputs: NarrativeInputs, cue: Block) -> str | None:
    """The agent entity a character cue names, or None when the cue resolves to none."""
    candidates = [cue.speaker or "", inputs.text[cue.start : cue.end]]
    for candidate in candidates:
        for entity_id in inputs.lexicon.resolve(candidate):
            if inputs.lexicon.types.get(entity_id) in AGENT_TYPES:
                return entity_id
    return None


def parenthetical_addressees(
    inputs: NarrativeInputs, blocks: list[Block], speaker: str
) -> tuple[list[str], bool]:
    """Addressees a "(to X)" parenthetical names, and whether one marks the line as said to no one present."""
    for block in blocks:
        text = inputs.text[block.start : block.end].strip()
        if TO_SELF.match(text):
            return [], True
        match = TO_ADDRESSEE.match(text)
        if match:
            ids = [
                e
                for e in inputs.lexicon.resolve(match.group("who"))
                if e != speaker and inputs.lexicon.types.get(e) in AGENT_TYPES
            ]
            if ids:
                return ids, False
    return [], False


def vocative_addressees(inputs: NarrativeInputs, lines: list[Block], speaker: str) -> list[str]:
    """Characters the lines call by name ("Listen, Nia."), in order of first call."""
    before_re, after_re = (
        (ZH_VOCATIVE_BEFORE, ZH_VOCATIVE_AFTER)
        if inputs.language == "zh"
        else (VOCATIVE_BEFORE, VOCATIVE_AFTER)
    )
    found: list[str] = []
    for block in lines:
        text = inputs.text[block.start : block.end]
        for match in inputs.lexicon.find_mentions(text):
            if match.entity_id == speaker or inputs.lexicon.types.get(match.entity_id) not in (
                "character",
                "group",
            ):
                continue
            if before_re.search(text[: match.start]) and after_re.match(text[match.end :]):
                found.append(match.entity_id)
    return list(dict.fromkeys(found))


def alternation_addressees(state: SceneState, speaker: str) -> list[str]:
    """The previous different speaker of the scene; else the one other character present."""
    for previous in reversed(state.speakers):
        if previous != speaker and previous not in state.gone:
            return [previous]
    others = [e for e in state.present if e != speaker and e not in state.gone]
    return others if len(others) == 1 else []
