"""Offline atomic facts about one entity: single-entity sentences of its linked chunks (or
sentences it speaks or is the subject of), typed by word cues, duplicates merged, and kept
to a bounded, diverse set in story order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from schemas.ids import make_id
from tasks.narrative.inputs import AGENT_TYPES, NarrativeInputs, clip_to_chunk

METHOD = "heuristic"
MAX_FACT_CHARS = 300
MIN_OWN_FACTS = 3  # below this many single-entity sentences, shared sentences are used as well
CUE_LOOKBACK = 800  # how far before a dialogue sentence its speaker's cue may stand

EN_FACT_CUES: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(p, re.IGNORECASE))
    for kind, p in (
        (
            "attribute",
            r"\(\s*(?:\d{1,3}s?|(?:early|mid|late)[ -]\d0s)\s*\)|"
            r"\b(?:is|was) (?:a|an) [a-z\-]+(?: [a-z\-]+)?\s*[.,]|"
            r"\b(?:aged?|years? old)\b",
        ),
        (
            "relation",
            r"\b(?:wife|husband|brother|sister|son|daughter|father|mother|dad|mum|mom|friend|boss|assistant|uncle|"
            r"aunt|cousin|girlfriend|boyfriend|partner|colleague|neighbou?r|fianc[ée]e?|widow(?:er)?|lover|"
            r"employer|nephew|niece|grand(?:father|mother|son|daughter)|stepmother|stepfather|ex-wife)s?\b",
        ),
        ("cause", r"\bbecause\b|\bso that\b|\btherefore\b|\bdue to\b|\bin order to\b|\bthat'?s why\b"),
        (
            "goal",
            r"\b(?:wants?|wanted|plans?|planned|needs?|needed|tries|tried|trying|"
            r"intends?|hopes?|hoped|going to|"
            r"wish(?:es|ed)?|determined to|decides? to|decided to|promise[sd]? to)\b",
        ),
        (
            "mental_state",
            r"\b(?:feels?|felt|fears?|feared|afraid|scared|loves?|loved|hates?|hated|angry|worried|worries|"
            r"happy|sad|upset|nervous|ashamed|jealous|stubborn|tired|proud|lonely|shocked|surprised|confused|"
            r"annoyed|furious|relieved|terrified|desperate|anxious|guilty|frightened|grief|weeps?|cries|sobs)\b",
        ),
        (
            "state",
            r"\b(?:is|was|are|were|has|had|seems?|seemed|looks?|remains?|remained|lies|lay|stands?|sits?)\b",
        ),
    )
]
ZH_FACT_CUES: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(p))
    for kind, p in (
        ("attribute", r"[（(]\s*\d{1,3}\s*岁?\s*[）)]|\d{1,3}岁|今年\d+"),
        (
            "relation",
            r"妻子|丈夫|老婆|老公|儿子|女儿|爸爸|父亲|母亲|妈妈|哥哥|姐姐|弟弟|妹妹|朋友|老板|前妻|姐夫|小舅子|同事|"
            r"邻居|亲爹|后爸|岳父|岳母|师父|徒弟|我姐|我哥",
        ),
        ("cause", r"因为|所以|为了|由于|因此"),
        ("goal", r"想要|打算|计划|需要|希望|决定|要去|一定要|非要"),
        (
            "mental_state",
            r"害怕|担心|生气|愤怒|高兴|难过|无奈|紧张|不耐烦|犹豫|失落|惊讶|惊恐|开心|伤心|愧疚|感动|暴怒|"
            r"狐疑|不屑|绝望|崩溃|哭|笑",
        ),
        ("state", r"是|在|有|正|躺|坐"),
    )
]
TYPE_PRIORITY = {
    "attribute": 0,
    "relation": 1,
    "goal": 2,
    "cause": 3,
    "mental_state": 4,
    "state": 5,
    "action": 6,
}


def fact_type(text: str, language: str) -> str:
    """The fact type cued by `text`: the first matching cue family, else 'action'."""
    for kind, pattern in ZH_FACT_CUES if language == "zh" else EN_FACT_CUES:
        if pattern.search(text):
            return kind
    return "action"


def normal_key(text: str) -> str:
    """Duplicate key of a fact: casefolded word characters only."""
    return " ".join(re.findall(r"\w+", text.casefold()))


@dataclass(frozen=True)
class Candidate:
    text: str
    fact_type: str
    start: int
    end: int
    related: tuple[str, ...]
    is_subject: bool
    is_spoken: bool = False


def entity_candidates(inputs: NarrativeInputs, entity_id: str, chunk_ids: list[str]) -> list[Candidate]:
    """Sentences of `chunk_ids` about the entity: it alone is named, it is the subject, or it speaks (shared
    sentences too when those are too few)."""
    name = inputs.lexicon.name(entity_id)
    headings = inputs.heading_keys
    out: list[Candidate] = []
    shared: list[Candidate] = []  # sentences where it is one of several named, not the subject
    for sentence in inputs.chunk_sentences(chunk_ids):
        if (int(sentence["char_start"]), str(sentence["text"])) in headings:
            continue  # a scene heading names its place but states no fact about it
        start, end, text = int(sentence["char_start"]), int(sentence["char_end"]), str(sentence["text"])
        hits = inputs.entities_in(start, end)
        ids = [e for _, e in hits]
        speaker = _speaker(inputs, sentence.get("speaker"))
        if entity_id in ids:
            others = [e for e in ids if e != entity_id]
            is_subject = hits[0][1] == entity_id and hits[0][0] - start <= (
                6 if inputs.language == "zh" else 40
            )
            if speaker is not None and _only_addressed(inputs, entity_id, start, end):
                continue
            candidate = Candidate(
                text,
                fact_type(_without(inputs, entity_id, text), inputs.language),
                start,
                end,
                tuple(others),
                is_subject,
            )
            (shared if others and not is_subject else out).append(candidate)
        elif speaker == entity_id and _substantial(text, inputs.language):
            cue = _cue_before(inputs, entity_id, start)
            if cue is None:
                continue
            spoken = f"{name}说：“{text}”" if inputs.language == "zh" else f"{name} says: \u201c{text}\u201d"
            out.append(Candidate(spoken, fact_type(text, inputs.language), cue, end, tuple(ids), True, True))
    # An entity that is never alone nor the subject ("a King and a Queen") still gets the sentences naming it.
    return out if len(out) >= MIN_OWN_FACTS else out + shared


def _without(inputs: NarrativeInputs, entity_id: str, text: str) -> str:
    """`text` with the entity's own names blanked, so "the wife" does not read as a kinship cue."""
    for match in reversed(inputs.lexicon.find_mentions(text)):
        if match.entity_id == entity_id:
            text = text[: match.start] + " " + text[match.end :]
    return text


def _only_addressed(inputs: NarrativeInputs, entity_id: str, start: int, end: int) -> bool:
    """In someone else's line the entity is only called by name ("Flat calm, Tom."): not a fact about it."""
    text = inputs.text[start:end]
    return all(
        re.match(r"\s*(?:[,.!?;:，。！？：…]|$)", text[m.end - start :])
        for m in inputs.lexicon.find_mentions(text, offset=start)
        if m.entity_id == entity_id
    )


def _substantial(text: str, language: str) -> bool:
    """A spoken line long enough to state something ("Maggie." or "Wait!" is not)."""
    if language == "zh":
        return len(re.sub(r"[\W\d]", "", text)) >= 5
    return len(re.findall(r"[A-Za-z'’]+", text)) >= 4


def _speaker(inputs: NarrativeInputs, speaker: Any) -> str | None:
    if not isinstance(speaker, str) or not speaker.strip():
        return None
    for entity_id in inputs.lexicon.resolve(speaker):
        if inputs.lexicon.types.get(entity_id) in AGENT_TYPES:
            return entity_id
    return None


def _cue_before(inputs: NarrativeInputs, entity_id: str, start: int) -> str | None:
    """Start of the nearest earlier naming of the speaker (its cue) in the same chunk, so the span
    names it."""
    chunk_start = int(inputs.chunk_at(start)["char_start"])
    window_start = max(chunk_start, start - CUE_LOOKBACK)
    matches = [
        m
        for m in inputs.lexicon.find_mentions(inputs.text[window_start:start], offset=window_start)
        if m.entity_id == entity_id
    ]
    return matches[-1].start if matches else None


def select_facts(candidates: list[Candidate], limit: int) -> list[Candidate]:
    """Duplicates merged (first occurrence kept); at most `limit`, preferring informative types,
    in story order."""
    unique: dict[str, Candidate] = {}
    for candidate in sorted(candidates, key=lambda c: (c.start, c.end)):
        unique.setdefault(normal_key(candidate.text), candidate)
    ranked = sorted(
        unique.values(),
        key=lambda c: (
            TYPE_PRIORITY[c.fact_type] >= 5 and not c.is_subject,
            TYPE_PRIORITY[c.fact_type] == 6,
            c.is_spoken,
            c.start,
        ),
    )
    return sorted(ranked[:limit], key=lambda c: (c.start, c.end))


def fact_rows(
    inputs: NarrativeInputs, entity_id: str, chunk_ids: list[str], limit: int
) -> list[dict[str, Any]]:
    """`atomic_facts` rows of one entity from its linked chunks."""
    rows = []
    for candidate in select_facts(entity_candidates(inputs, entity_id, chunk_ids), limit):
        chunk, start, end = clip_to_chunk(inputs, candidate.start, candidate.end)
        text = (
            candidate.text
            if len(candidate.text) <= MAX_FACT_CHARS
            else candidate.text[: MAX_FACT_CHARS - 1] + "…"
        )
        rows.append(
            {
                "fact_id": make_id("fact", inputs.doc_id, entity_id, normal_key(candidate.text)),
                "doc_id": inputs.doc_id,
                "entity_id": entity_id,
                "text": text,
                "fact_type": candidate.fact_type,
                "related_entity_ids": list(dict.fromkeys(candidate.related)),
                "chunk_id": chunk["chunk_id"],
                "section_id": chunk["section_id"],
                "char_start": start,
                "char_end": end,
                "method": METHOD,
            }
        )
    return rows
