"""Chinese screenplay speakers: `程勇：…`, `程勇爸爸OS：…`, `程勇一脸颓势：…`.

A speaker string often carries a manner phrase before the colon. The cue lexicon is built by
frequency first (names that recur, or that begin other speaker strings); a speaker string
that starts with a known name followed by anything but a kinship or role noun is that name
("程勇一脸颓势" -> 程勇, but "程勇爸爸" stays a person of its own).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from tasks.graph.names import ZH_FAMILIAR_PREFIXES, ZH_RELATION_NOUNS

_VOICE_SUFFIX = re.compile(r"(?:[（(]?(?:OS|VO|O\.S\.|V\.O\.|os|vo)[）)]?|画外音|旁白)$")
_NOT_SPEAKERS = ("字幕", "画面", "镜头", "场景", "音乐", "黑场", "切")
COLLECTIVE_ZH = frozenset("众人 大家 大家一起 群众 所有人 众病人 病友们 众警察 人群 全体 一众".split())
_ROLE_ENDINGS = tuple("员长师官者生手工表理任人士家主板头队警")


@dataclass(frozen=True)
class ZhSpeaker:
    name: str  # the speaker's name
    offset: int  # where the name starts inside the raw speaker string


def strip_voice(speaker: str) -> str:
    """'程勇爸爸OS' -> '程勇爸爸'; a bare '画外音' stays (it is the narrator)."""
    stripped = _VOICE_SUFFIX.sub("", speaker.strip()).strip()
    return stripped or speaker.strip()


def resolve_speakers(raw_speakers: Counter, text: str) -> dict[str, ZhSpeaker]:
    """Map each raw zh speaker string to the name it denotes (None-free: every key maps)."""
    stripped = {raw: strip_voice(raw) for raw in raw_speakers}
    counts: Counter = Counter()
    for raw, n in raw_speakers.items():
        counts[stripped[raw]] += n
    names = set(counts)
    base = {s for s in names if counts[s] >= 2 or any(o != s and o.startswith(s) for o in names)}
    resolved: dict[str, ZhSpeaker] = {}
    for raw in raw_speakers:
        speaker = stripped[raw]
        if speaker.startswith(_NOT_SPEAKERS):
            continue
        resolved[raw] = _resolve_one(speaker, base, text)
    return resolved


def _resolve_one(speaker: str, base: set[str], text: str) -> ZhSpeaker:
    if "的" in speaker:  # "电视里的赵立忠": the name after the last 的
        tail = speaker.rsplit("的", 1)[1]
        if tail in base:
            return ZhSpeaker(tail, len(speaker) - len(tail))
    for prefix in sorted((b for b in base if b != speaker and speaker.startswith(b)), key=len, reverse=True):
        remainder = speaker[len(prefix) :]
        if remainder in ZH_RELATION_NOUNS or any(
            remainder.startswith(n) and len(n) >= 2 for n in ZH_RELATION_NOUNS
        ):
            break  # "程勇前妻…": a kinship compound, not 程勇 with a manner
        return ZhSpeaker(prefix, 0)
    if speaker in base or len(speaker) <= 3:
        return ZhSpeaker(speaker, 0)
    # A one-off speaker string: the longest prefix that recurs in the text is the name ("医药代表冷静"),
    # unless what follows is itself a role ("瑞士代表" is a representative, not 瑞士).
    for cut in range(len(speaker) - 2, 1, -1):
        if text.count(speaker[:cut]) >= 2 and not speaker.endswith(_ROLE_ENDINGS):
            return ZhSpeaker(speaker[:cut], 0)
    return ZhSpeaker(speaker, 0)


def given_names(names: list[str], text: str) -> dict[str, str]:
    """Given names of three-character names used on their own ('小澍' for 程小澍), name -> full name."""
    found: dict[str, str] = {}
    for name in names:
        if len(name) != 3:
            continue
        given = name[1:]
        standalone = len(re.findall(f"(?<!{re.escape(name[0])}){re.escape(given)}", text))
        if standalone >= 2 and not any(given in other for other in names if other != name):
            found[given] = name
    return found


def familiar_names(text: str, names: list[str]) -> Counter:
    """'老程', '老刘': a familiar prefix plus the surname of a known name, used as a name."""
    surnames = {n[0] for n in names if len(n) >= 2}
    counts: Counter = Counter()
    for match in re.finditer(
        f"({'|'.join(ZH_FAMILIAR_PREFIXES)})([\u4e00-\u9fff])(?=[^\u4e00-\u9fff]|[啊呀吧呢啦]|$)", text
    ):
        if match.group(2) in surnames and match.group(0) not in names:
            counts[match.group(0)] += 1
    return counts
