"""Offline narrative units from prose: events from narrated sentences with a character subject
(a sentence-initial pronoun continues the previous subject), interactions from quoted
dialogue with its attribution ("said the fisherman to his wife"), one occasion per section."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tasks.narrative.cues import line_type
from tasks.narrative.dialogue import (
    VOCATIVE_AFTER,
    VOCATIVE_BEFORE,
    ZH_VOCATIVE_AFTER,
    ZH_VOCATIVE_BEFORE,
    interaction_description,
)
from tasks.narrative.inputs import AGENT_TYPES, NarrativeInputs, interaction_row, join_names, occasion_row
from tasks.narrative.screenplay_units import METHOD, sentence_units, situation_occasions

QUOTE = re.compile(r"\"[^\"]{1,3000}\"|“[^”]{1,3000}”|「[^」]{1,3000}」")
PARAGRAPH = re.compile(r"\S(?:.*\S)?(?:\n(?![ \t]*\n).*)*")
SAY = (
    r"said|says|asked|asks|cried|replied|answered|shouted|whispered|called|exclaimed|begged|continued|screamed|"
    r"added|muttered|sobbed|roared|thought|told|warned|commanded|ordered|pleaded|answered|spoke"
)
WHO = r"(?P<who>(?:the |his |her |their |a |an |old |young |little )*[\w'’\-]+(?: [A-Z][\w'’\-]+)?)"
TO = r"(?:\s+to\s+(?P<to>(?:the |his |her |their )?[\w'’\-]+(?: [A-Z][\w'’\-]+)?))?"
AFTER_INVERTED = re.compile(rf"^\W*(?P<verb>{SAY})\s+{WHO}{TO}", re.IGNORECASE)
AFTER_NORMAL = re.compile(rf"^\W*{WHO}\s+(?P<verb>{SAY}){TO}", re.IGNORECASE)
BEFORE = re.compile(rf"{WHO}\s+(?P<verb>{SAY}){TO}[^\"“]{{0,30}}[,:]?\s*$", re.IGNORECASE)
ZH_SAY = r"说道|说|问道|问|道|喊道|喊|叫道|回答|答道"
ZH_BEFORE = re.compile(
    rf"(?P<who>[\u4e00-\u9fff]{{1,8}}?)(?:对(?P<to>[\u4e00-\u9fff]{{1,6}}))?(?P<verb>{ZH_SAY})[：:，,]?\s*$"
)
ZH_AFTER = re.compile(
    rf"^[，,]?(?P<who>[\u4e00-\u9fff]{{1,8}}?)(?:对(?P<to>[\u4e00-\u9fff]{{1,6}}))?(?P<verb>{ZH_SAY})"
)
MAX_ANTECEDENT_GAP = 400  # chars back to the subject's name that a pronoun-led event span may reach
PRONOUN_START = re.compile(r"^\W*(?:he|she|they)\b", re.IGNORECASE)
EN_PAST = re.compile(
    r"\b(?:[a-z]{2,}ed|went|came|sat|said|took|put|got|gave|saw|found|ran|stood|thought|knew|made|told|"
    r"left|felt|began|brought|let|heard|caught|became|fell|rose|swam|spoke|wept|threw|kept|was|were|"
    r"had|did|goes|comes|says)\b"
)
VERB_TYPES = {
    "asked": "ask",
    "asks": "ask",
    "begged": "request",
    "pleaded": "request",
    "warned": "warn",
    "replied": "answer",
    "answered": "answer",
    "commanded": "command",
    "ordered": "command",
    "问": "ask",
    "问道": "ask",
    "回答": "answer",
    "答道": "answer",
}


@dataclass
class Quote:
    start: int
    end: int
    speaker: str | None
    addressee: str | None
    verb: str | None
    paragraph: int = 0


def prose_units(inputs: NarrativeInputs, max_events_per_chunk: int) -> dict[str, list[dict[str, Any]]]:
    """Events, interactions and occasions of a prose document, section by section."""
    events: list[dict[str, Any]] = []
    interactions: list[dict[str, Any]] = []
    occasions: list[dict[str, Any]] = []
    per_chunk: Counter = Counter()
    for section in inputs.sections.to_dict("records"):
        start, end = int(section["char_start"]), int(section["char_end"])
        quotes = _quotes(inputs, start, end)
        present: Counter = Counter()
        places: Counter = Counter()
        last_subject: str | None = None
        antecedent: int | None = None  # where the last subject was named
        for sentence in inputs.section_sentences(section):
            s_start, s_end = int(sentence["char_start"]), int(sentence["char_end"])
            hits = inputs.entities_in(s_start, s_end)
            present.update(inputs.of_types(hits, frozenset({"character"})))
            places.update(inputs.of_types(hits, frozenset({"location"})))
            narration = _narration(inputs.text, s_start, s_end, quotes)
            if not narration.strip() or per_chunk[sentence["chunk_id"]] >= max_events_per_chunk:
                continue
            if _only_attribution(narration, s_start, s_end, quotes):
                continue  # '"Let me go," said the flounder': speech, recorded as an interaction
            narrated_hits = [(p, e) for p, e in hits if not _inside(p, quotes)]
            subject = _subject(inputs, narration, narrated_hits, s_start, last_subject)
            if subject is None:
                continue
            named = [p for p, e in hits if e == subject]
            span_start = s_start
            if not named:  # "He went home.": the span reaches back to where the subject was last named
                if (
                    antecedent is None
                    or s_start - antecedent > MAX_ANTECEDENT_GAP
                    or inputs.chunk_at(antecedent)["chunk_id"] != sentence["chunk_id"]
                ):
                    continue
                span_start = antecedent
            last_subject, antecedent = subject, (named[-1] if named else antecedent)
            made = sentence_units(
                inputs, span_start, s_end, str(sentence["text"]), narrated_hits, section, None, subject
            )
            per_chunk[sentence["chunk_id"]] += len(made[0])
            events.extend(made[0])
            interactions.extend(made[1])
        setting = places.most_common(1)[0][0] if places else None
        for row in events:
            if row["section_id"] == section["section_id"] and row["setting_id"] is None:
                row["setting_id"] = setting
        occasion = _section_occasion(inputs, section, present, setting)
        dialogue = _dialogue(inputs, section, quotes, occasion["occasion_id"])
        interactions.extend(dialogue)
        if present or dialogue:
            occasions.append(occasion)
    occasions.extend(situation_occasions(inputs, occasions))
    return {"events": events, "interactions": interactions, "occasions": occasions}


def _quotes(inputs: NarrativeInputs, start: int, end: int) -> list[Quote]:
    """Quoted speech of a section with the speaker and addressee named by its attribution."""
    text = inputs.text
    quotes: list[Quote] = []
    for paragraph in PARAGRAPH.finditer(text, start, end):
        p_start, p_end = paragraph.start(), min(paragraph.end(), end)
        found = list(QUOTE.finditer(text, p_start, p_end))
        for index, match in enumerate(found):
            after_end = found[index + 1].start() if index + 1 < len(found) else p_end
            before_start = found[index - 1].end() if index else p_start
            who, to, verb = _attribution(
                inputs, text[match.end() : after_end], text[before_start : match.start()]
            )
            quotes.append(Quote(match.start(), match.end(), who, to, verb, p_start))
        _share_within_paragraph(quotes[len(quotes) - len(found) :])
    return quotes


def _attribution(
    inputs: NarrativeInputs, after: str, before: str
) -> tuple[str | None, str | None, str | None]:
    if inputs.language == "zh":
        candidates = [ZH_AFTER.match(after), ZH_BEFORE.search(before)]
    else:
        candidates = [AFTER_INVERTED.match(after), AFTER_NORMAL.match(after), BEFORE.search(before)]
    for match in candidates:
        if match is None:
            continue
        who = _agent(inputs, match.group("who"))
        to = _agent(inputs, match.group("to")) if match.group("to") else None
        if who is not None or match.group("who").lower() in ("he", "she", "they", "i", "we"):
            return who, to, match.group("verb").lower()
    return None, None, None


def _share_within_paragraph(quotes: list[Quote]) -> None:
    # "Well," said the fisherman, "there is no need..." : unattributed parts take the paragraph's speaker.
    known = next((q for q in quotes if q.speaker), None)
    for quote in quotes:
        if quote.speaker is None and known is not None:
            quote.speaker, quote.addressee = known.speaker, quote.addressee or known.addressee
            quote.verb = quote.verb or known.verb


def _agent(inputs: NarrativeInputs, phrase: str | None) -> str | None:
    for entity_id in inputs.lexicon.resolve(phrase):
        if inputs.lexicon.types.get(entity_id) in AGENT_TYPES:
            return entity_id
    return None


def _inside(position: int, quotes: list[Quote]) -> bool:
    return any(q.start <= position < q.end for q in quotes)


def _only_attribution(narration: str, start: int, end: int, quotes: list[Quote]) -> bool:
    if not any(q.start < end and q.end > start for q in quotes):
        return False
    words = re.findall(r"[\w'’]+", narration)
    return len(words) <= 6 and bool(re.search(rf"\b(?:{SAY})\b|{ZH_SAY}", narration, re.IGNORECASE))


def _narration(text: str, start: int, end: int, quotes: list[Quote]) -> str:
    """The sentence without its quoted parts (a sentence inside a quote has no narration)."""
    chars = list(text[start:end])
    for quote in quotes:
        for i in range(max(start, quote.start), min(end, quote.end)):
            chars[i - start] = " "
    return "".join(chars)


def _subject(
    inputs: NarrativeInputs,
    narration: str,
    hits: list[tuple[int, str]],
    offset: int,
    last_subject: str | None,
) -> str | None:
    """A character named near the start of the narration, or the previous subject for a leading pronoun."""
    limit = 6 if inputs.language == "zh" else len(" ".join(narration.split()[:6]))
    stripped = len(narration) - len(narration.lstrip())
    for position, entity_id in hits:
        if inputs.lexicon.types.get(entity_id) == "character" and position - offset - stripped <= limit:
            return entity_id if inputs.language == "zh" or EN_PAST.search(narration.lower()) else None
    if (
        inputs.language != "zh"
        and last_subject
        and PRONOUN_START.match(narration)
        and EN_PAST.search(narration.lower())
    ):
        return last_subject
    return None


def _dialogue(
    inputs: NarrativeInputs, section: dict[str, Any], quotes: list[Quote], occasion_id: str
) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    speakers: list[str] = []
    previous: tuple[str, str, str] | None = None  # (speaker, addressee, type)
    for turn in _turns(quotes):
        speaker = turn[0].speaker or _other(speakers)
        if speaker is None:
            continue
        line = " ".join(inputs.text[q.start + 1 : q.end - 1] for q in turn)
        addressee = (
            turn[0].addressee
            or _quote_vocative(inputs, turn, speaker)
            or _other([s for s in speakers if s != speaker] or [], exclude=speaker)
        )
        answered = bool(
            previous and previous[2] == "ask" and previous[0] == addressee and previous[1] == speaker
        )
        kind = VERB_TYPES.get(turn[0].verb or "") or line_type(
            line, inputs.language, answers_question=answered
        )
        if not speakers or speakers[-1] != speaker:
            speakers.append(speaker)
        previous = (speaker, addressee or "", kind)
        if addressee is None or addressee == speaker:
            continue
        description = interaction_description(
            inputs.lexicon.name(speaker),
            [inputs.lexicon.name(addressee)],
            kind,
            " ".join(line.split()),
            inputs.language,
        )
        rows.append(
            interaction_row(
                inputs,
                turn[0].start,
                turn[-1].end,
                speaker,
                [addressee],
                kind,
                description,
                None,
                occasion_id,
                True,
                inputs.text[turn[0].start : turn[-1].end],
                METHOD,
            )
        )
    return rows


def _turns(quotes: list[Quote]) -> list[list[Quote]]:
    """Consecutive quotes of one speaker (or of one unnamed speaker) within a paragraph form one turn."""
    turns: list[list[Quote]] = []
    for quote in quotes:
        if turns and turns[-1][-1].speaker == quote.speaker and turns[-1][-1].paragraph == quote.paragraph:
            turns[-1].append(quote)
        else:
            turns.append([quote])
    return turns


def _other(speakers: list[str], exclude: str | None = None) -> str | None:
    """In a two-party exchange the unattributed line belongs to the one who did not speak last."""
    distinct = list(dict.fromkeys(reversed(speakers)))
    if exclude is not None:
        return next((s for s in distinct if s != exclude), None)
    return distinct[1] if len(distinct) >= 2 else None


def _quote_vocative(inputs: NarrativeInputs, turn: list[Quote], speaker: str) -> str | None:
    before_re, after_re = (
        (ZH_VOCATIVE_BEFORE, ZH_VOCATIVE_AFTER)
        if inputs.language == "zh"
        else (VOCATIVE_BEFORE, VOCATIVE_AFTER)
    )
    for quote in turn:
        inner = inputs.text[quote.start + 1 : quote.end - 1]
        for match in inputs.lexicon.find_mentions(inner):
            if (
                match.entity_id != speaker
                and inputs.lexicon.types.get(match.entity_id) == "character"
                and before_re.search(inner[: match.start])
                and after_re.match(inner[match.end :])
            ):
                return match.entity_id
    return None


def _section_occasion(
    inputs: NarrativeInputs, section: dict[str, Any], present: Counter, setting: str | None
) -> dict[str, Any]:
    participants = [e for e, _ in sorted(present.items(), key=lambda kv: (-kv[1], kv[0]))]
    names = join_names([inputs.lexicon.name(e) for e in participants[:8]], inputs.language)
    place = inputs.lexicon.name(setting) if setting else ""
    heading = str(section.get("heading") or "")
    if inputs.language == "zh":
        description = f"{heading}：{names}" + (f"在{place}" if place else "") + "。"
    else:
        description = f"{heading}: {names or 'the narrator'}" + (f" at {place}" if place else "") + "."
    return occasion_row(
        inputs,
        description,
        "scene",
        participants,
        setting,
        [section["section_id"]],
        inputs.section_chunk_ids(section["section_id"]),
        METHOD,
        key="section",
    )
