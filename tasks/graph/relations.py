"""Relations the text's structure supports, shared by the screenplay and prose heuristics:
co-occurrence in a sentence, a speaker talking to or about someone, dialogue exchanges and
character-setting links. Binary, unordered, grounded by the chunks of their evidence.
"""

from __future__ import annotations

import bisect
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from tasks.graph.upsert import ChunkIndex, EntityKey, GraphDraft
from tasks.text import STOPWORDS_EN

PRONOUN_START = re.compile(r"^(?:He|She|They)\b")
_WORD = re.compile(r"[A-Za-z][a-z'’]+")
_NOT_VERBS = frozenset(
    """
is was has does this his hers its yes always perhaps sometimes series less unless across news glass gas
boss dress kiss press class grass mess loss cross bus plus thus towards afterwards upstairs downstairs
outside inside seems means lots guys ones eyes hands things times years words others days nights
""".split()
)
DESCRIPTION_SNIPPET = 240
_FIRST_SECOND_PERSON = re.compile(
    r"\b(?:I|I'm|I'll|I've|I'd|me|my|mine|you|your|you're|we|us|our)\b", re.IGNORECASE
)
_ACTION_OPENERS = frozenset({"he", "she", "they", "the", "a", "an", "his", "her"})


@dataclass(frozen=True)
class Mention:
    start: int
    end: int
    key: EntityKey


class MentionIndex:
    """Mentions sorted by position, to find those inside a sentence span."""

    def __init__(self, mentions: Iterable[Mention]) -> None:
        self.items = sorted(mentions, key=lambda m: (m.start, m.end))
        self._starts = [m.start for m in self.items]

    def within(self, start: int, end: int) -> list[Mention]:
        index = bisect.bisect_left(self._starts, start)
        found = []
        while index < len(self.items) and self.items[index].start < end:
            if self.items[index].end <= end:
                found.append(self.items[index])
            index += 1
        return found


def snippet(text: str, limit: int = DESCRIPTION_SNIPPET) -> str:
    """One line of evidence text, cut at a word boundary."""
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut + "…"


def verb_keywords(sentence: str, names: set[str], limit: int = 3) -> list[str]:
    """Verbs of an English action sentence: the -s/-ed words after a subject, 'and' or 'then'."""
    words = _WORD.findall(sentence)
    found: list[str] = []
    for previous, word in zip([""] + words, words):
        lower = word.lower()
        if (
            not word[0].islower()
            or lower in STOPWORDS_EN
            or lower in _NOT_VERBS
            or lower in names
            or len(lower) < 4
        ):
            continue
        subject = previous[:1].isupper() or previous.lower() in (
            "he",
            "she",
            "they",
            "and",
            "then",
            "it",
            "who",
        )
        if subject and (lower.endswith("s") and not lower.endswith("ss") or lower.endswith("ed")):
            base = _base_form(lower)
            if base not in found:
                found.append(base)
        if len(found) >= limit:
            break
    return found


def reads_as_action(sentence: str, names: set[str]) -> bool:
    """A 'dialogue' line that is really stage direction ("Banky seethes."), as in screenplays
    printed without blank lines between dialogue and action."""
    words = sentence.split()
    if len(words) < 2 or sentence.rstrip().endswith("?") or _FIRST_SECOND_PERSON.search(sentence):
        return False
    first = re.sub(r"['’]s$", "", words[0].strip("(\"'“‘").rstrip(",")).lower()
    return (first in names or first in _ACTION_OPENERS) and bool(verb_keywords(sentence, names))


def _base_form(word: str) -> str:
    if word.endswith(("ches", "shes", "sses", "xes", "zes", "oes")):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s"):
        return word[:-1]
    return word


def sentence_relations(
    draft: GraphDraft,
    sentences: pd.DataFrame,
    mentions: MentionIndex,
    speaker_keys: dict[str, EntityKey],
    names: dict[EntityKey, str],
    language: str,
) -> None:
    """Co-occurrence in action sentences, and speaker-to-mentioned links in dialogue sentences."""
    name_words = {w for n in names.values() for w in n.lower().split()}
    previous_subject: tuple[str, int, EntityKey] | None = None  # (section, ordinal, sole character)
    for row in sentences.sort_values("ordinal").itertuples():
        start, end = int(row.char_start), int(row.char_end)
        found = mentions.within(start, end)
        keys = list(dict.fromkeys(m.key for m in found))
        speaker = speaker_keys.get(row.speaker) if isinstance(row.speaker, str) else None
        chunk_ids = [row.chunk_id]
        text = draft.text[start:end]
        if speaker is not None and language != "zh" and reads_as_action(text, name_words):
            speaker = None
        characters = [k for k in keys if k[0] in ("character", "group")]
        if speaker is not None:
            for key in keys:
                if key == speaker:
                    continue
                vocative = any(m.key == key and _is_vocative(draft.text, start, end, m) for m in found)
                verb = (
                    ("addresses" if vocative else "mentions")
                    if language != "zh"
                    else ("称呼" if vocative else "提到")
                )
                draft.add_relation(
                    speaker,
                    key,
                    f'{names[speaker]}: "{snippet(text)}"',
                    [verb],
                    chunk_ids,
                    method="heuristic:dialogue",
                )
            previous_subject = None
            continue
        if (
            not characters
            and previous_subject is not None
            and language != "zh"
            and previous_subject[0] == row.section_id
            and previous_subject[1] == row.ordinal - 1
            and PRONOUN_START.match(text)
        ):
            characters = [previous_subject[2]]  # "She takes the key": the subject carries over
            keys = characters + keys
        previous_subject = (row.section_id, row.ordinal, characters[0]) if len(characters) == 1 else None
        if not characters or len(keys) < 2:
            continue
        verbs = verb_keywords(text, name_words) if language != "zh" else []
        for i, a in enumerate(keys):
            for b in keys[i + 1 :]:
                if a[0] not in ("character", "group") and b[0] not in ("character", "group"):
                    continue
                draft.add_relation(
                    a,
                    b,
                    snippet(text),
                    verbs or (["co-occur"] if language != "zh" else ["同场"]),
                    chunk_ids,
                    method="heuristic:sentence",
                )


def _is_vocative(text: str, start: int, end: int, mention: Mention) -> bool:
    before = text[start : mention.start].strip()
    after = text[mention.end : end].lstrip()[:1]
    at_start = before == "" and after in (",", "!", "?", ".", "，", "！", "？", "。", "…")
    at_end = before.endswith((",", "，")) and after in ("!", "?", ".", "！", "？", "。", "")
    return at_start or at_end


def exchange_relations(
    draft: GraphDraft,
    turns: list[tuple[str, EntityKey, int, int]],
    names: dict[EntityKey, str],
    chunks: ChunkIndex,
    language: str,
) -> None:
    """Consecutive turns of two different speakers in one section form a dialogue exchange."""
    for (section_a, a, start_a, end_a), (section_b, b, start_b, end_b) in zip(turns, turns[1:]):
        if section_a != section_b or a == b:
            continue
        chunk_ids = [
            c.chunk_id
            for c in (chunks.locate(start_a, start_a + 1), chunks.locate(start_b, start_b + 1))
            if c
        ]
        line_a, line_b = snippet(draft.text[start_a:end_a], 100), snippet(draft.text[start_b:end_b], 100)
        description = f'{names[a]}: "{line_a}" / {names[b]}: "{line_b}"'
        draft.add_relation(
            a,
            b,
            description,
            ["dialogue" if language != "zh" else "对话"],
            chunk_ids,
            method="heuristic:exchange",
        )


def setting_relations(
    draft: GraphDraft,
    mentions: MentionIndex,
    chunks: ChunkIndex,
    section_locations: dict[str, EntityKey],
    headings: dict[str, str],
    names: dict[EntityKey, str],
    language: str,
) -> None:
    """A character present in a scene is linked to the scene's location, once per scene."""
    present: dict[tuple[EntityKey, str], set[str]] = defaultdict(set)
    for mention in mentions.items:
        if mention.key[0] not in ("character", "group"):
            continue
        chunk = chunks.locate(mention.start, mention.end)
        if chunk is not None and chunk.section_id in section_locations:
            present[(mention.key, chunk.section_id)].add(chunk.chunk_id)
    for (key, section_id), chunk_ids in sorted(present.items()):
        location = section_locations[section_id]
        description = (
            f"{names[key]} appears at {names[location]} ({headings[section_id]})"
            if language != "zh"
            else f"{names[key]}出现在{names[location]}（{headings[section_id]}）"
        )
        draft.add_relation(
            key,
            location,
            description,
            ["setting" if language != "zh" else "场景"],
            chunk_ids,
            method="heuristic:setting",
        )
