"""Typed spans read from one evidence sentence (offline, no LLM): who -> an entity's canonical name
(graph names in the sentence, else its speaker or a capitalised name); where -> a location entity or
a place phrase, else the scene's location; when -> a time expression, else the scene's time of day;
why -> a causal clause; how -> the means ("by ...") or the feeling named; what did X do -> X's action
clause; what did X find/see/... -> the part of the sentence the question does not already say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Callable

from tasks.query.options.rules import term_key
from tasks.query.question_form import QuestionForm
from tasks.query.short_answers.objects import PLACE_PHRASE
from tasks.text import STOPWORDS_EN

# (start, end, canonical name, entity type) of every entity named in a text
EntityFinder = Callable[[str], list[tuple[int, int, str, str]]]
MAX_WORDS = 14
CAUSE_CUE = re.compile(
    r"\b(?:because of|because|since|so that|in order to|in order that|for fear that|"
    r"as a result of|due to)\b|,\s*for\b|,\s*as\b",
    re.IGNORECASE,
)
PURPOSE = re.compile(
    r"\bto\s+(?!the\b|a\b|an\b|his\b|her\b|their\b|my\b|its\b|our\b|your\b|him\b|them\b|me\b|us\b)"
    r"[a-z]+\b",
    re.IGNORECASE,
)
MEANS = re.compile(r"\bby\s+\w+ing\b|\bwith\s+(?:the|a|an|his|her|their)\b", re.IGNORECASE)
FEELING_VERB = re.compile(
    r"\b(?:felt|feel|feels|was|were|became|become|grew|looked|seemed)\s+"
    r"(?:very\s+|so\s+|quite\s+|rather\s+|much\s+|most\s+|too\s+)?([a-z]+)",
    re.IGNORECASE,
)
FEELINGS = frozenset(
    """happy sad angry afraid frightened scared terrified delighted glad sorry ashamed surprised astonished
amazed grateful thankful jealous envious proud lonely worried anxious joyful furious pleased
miserable unhappy stupefied curious excited disappointed upset nervous hopeful relieved content
satisfied embarrassed confused puzzled annoyed cross shocked horrified sorrowful merry cheerful
overjoyed uneasy troubled distressed vexed eager fond heartbroken greedy bewildered alarmed hurt
calm""".split()
)
TIME_WORDS = (
    r"morning|evening|night|midnight|dawn|dusk|noon|afternoon|daybreak|sunrise|sunset|day|week|month|year|"
    r"spring|summer|autumn|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday|christmas|today|"
    r"tonight|tomorrow|yesterday"
)
TIME_EXPRESSION = re.compile(
    rf"\b(?:(?:\w+|\d+)\s+(?:years?|days?|weeks?|months?|hours?|minutes?)\s+(?:later|after|before|ago)"
    rf"|(?:at|in|on|during|by|before|after|until|one|that|the|next|every|each|all)\s+(?:the\s+)?"
    rf"(?:next|following|same|first|last|very|early|late|whole)?\s*(?:{TIME_WORDS})\b"
    rf"|\d{{1,2}}(?::\d\d)?\s*(?:a\.?m\.?|p\.?m\.?|o'clock)|(?:when|after|before|until|while)\s+[^,.;!?]+)",
    re.IGNORECASE,
)
CLAUSE_END = re.compile(r"[.;:!?]|,\s*(?:and|but|or|so|while|when|then|which|who)\b|\s(?:but|and then)\s")
SPEECH = re.compile(
    r"\b(?:say|says|said|tell|tells|told|ask|asks|asked|reply|replied|shout|shouted|call|called)\b"
)
LEADING_WH = re.compile(r"^\W*(why|how|who|whom|whose|when|where|which|what)\b")
ACTION = re.compile(r"^what\s+(?:did|does|do|will|would|had|has|could)\s+(.+?)\s+do\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    text: str
    section_id: str | None
    score: float
    speaker: str | None = None
    location: str | None = None  # the scene's location, when the section has one
    time_of_day: str | None = None
    actor: str | None = (
        None  # who a leading pronoun stands for (the last character named before it in the scene)
    )
    before: str | None = None  # the sentence before it in the same section
    after: str | None = None  # the sentence after it in the same section
    heading: bool = False  # the line is its scene's heading: a place to quote, never a sentence answer


def _words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z][A-Za-z'’-]*|\d+", text)


def _clip(text: str, limit: int = MAX_WORDS) -> str:
    text = CLAUSE_END.split(text, maxsplit=1)[0]
    words = text.strip(" ,\"'“”‘’").split()
    return " ".join(words[:limit]).strip(" ,\"'“”‘’")


def question_keys(question: str) -> set[str]:
    return {term_key(w) for w in _words(question) if w.lower() not in STOPWORDS_EN}


def _novel(phrase: str, keys: set[str]) -> float:
    """Share of a phrase's content words that the question does not already say."""
    words = [w for w in _words(phrase) if w.lower() not in STOPWORDS_EN]
    if not words:
        return 0.0
    return sum(1 for w in words if term_key(w) not in keys) / len(words)


def _who(
    question: str, candidate: Candidate, keys: set[str], find: EntityFinder | None
) -> tuple[str, str] | None:
    lowered = question.lower()
    first_person = re.search(r"\b(?:I|me|my)\b", candidate.text)
    if (
        candidate.speaker
        and (SPEECH.search(lowered) or first_person)
        and candidate.speaker.lower() not in lowered
    ):
        return candidate.speaker, "the speaker of the supporting line"
    if candidate.actor and candidate.actor.lower() not in lowered:
        return (
            candidate.actor,
            "the character the sentence's pronoun refers to (last named before it in the scene)",
        )
    found = find(candidate.text) if find is not None else []
    named = [
        (start, name, kind)
        for start, _, name, kind in found
        if name.lower() not in lowered and not (question_keys(name) & keys and kind != "character")
    ]
    for preferred in ("character", "group", "role"):
        pool = [n for n in named if n[2] == preferred]
        if pool:
            start, name, kind = min(pool)
            return name, f"{kind} named in the supporting sentence (canonical name from the graph)"
    if find is not None:
        return None
    names = re.findall(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)", candidate.text)
    names = [n for n in names if n.lower() not in STOPWORDS_EN and term_key(n) not in keys]
    return (names[0], "a capitalised name in the supporting sentence") if names else None


def _where(
    candidate: Candidate, keys: set[str], find: EntityFinder | None, lowered_q: str
) -> tuple[str, str] | None:
    for start, _, name, kind in sorted(find(candidate.text) if find is not None else []):
        if kind == "location" and name.lower() not in lowered_q:
            return name, "a location entity in the supporting sentence"
    for match in PLACE_PHRASE.finditer(candidate.text):
        phrase = _clip(match.group(0), 9)
        if len(phrase.split()) >= 2 and _novel(phrase, keys) >= 0.5:
            return phrase, "a place phrase in the supporting sentence"
    if candidate.location:
        return candidate.location.strip().title(), "the scene's location"
    return None


def _when(candidate: Candidate, keys: set[str]) -> tuple[str, str] | None:
    for match in TIME_EXPRESSION.finditer(candidate.text):
        phrase = _clip(match.group(0), 10)
        if phrase and _novel(phrase, keys) > 0:
            return phrase, "a time expression in the supporting sentence"
    if candidate.time_of_day:
        return candidate.time_of_day.strip().lower(), "the scene's time of day"
    return None


def _why(candidate: Candidate, keys: set[str]) -> tuple[str, str] | None:
    text = candidate.text
    for match in CAUSE_CUE.finditer(text):
        phrase = _clip(text[match.end() :])
        if len(phrase.split()) >= 2 and _novel(phrase, keys) > 0:
            cue = match.group(0).strip(" ,")
            return (
                f"{cue} {phrase}" if cue.lower() in ("in order to", "so that") else phrase,
                f'the clause after "{cue}"',
            )
    so = re.search(r",?\s+so\s+(?!that\b)", text)
    if so and _novel(text[so.end() :], keys) < _novel(text[: so.start()], keys):
        phrase = _clip(re.split(r"[.;:!?]", text[: so.start()])[-1])
        if len(phrase.split()) >= 2:
            return phrase, 'the clause before "so"'
    for match in PURPOSE.finditer(text):
        phrase = _clip(text[match.start() :])
        if len(phrase.split()) >= 2 and _novel(phrase, keys) >= 0.5:
            return phrase, 'the purpose clause ("to ...")'
    return None


def _feeling(candidate: Candidate, keys: set[str]) -> tuple[str, str] | None:
    for word in _words(candidate.text):
        if word.lower() in FEELINGS and term_key(word) not in keys:
            return word.lower(), "a feeling word in the supporting sentence"
    for match in FEELING_VERB.finditer(candidate.text):
        word = match.group(1).lower()
        if word not in STOPWORDS_EN and not word.endswith("ing") and term_key(word) not in keys:
            return word, "the state named after the linking verb"
    return None


def _action(subject: str, candidate: Candidate, keys: set[str]) -> tuple[str, str] | None:
    """The clause after the actor (by name, or a pronoun standing for it)."""
    heads = [w for w in _words(subject) if w.lower() not in STOPWORDS_EN] or _words(subject)
    pattern = re.compile(
        r"\b(?:%s|he|she|they)\b" % "|".join(re.escape(h) for h in heads[-1:]), re.IGNORECASE
    )
    for match in pattern.finditer(candidate.text):
        phrase = _clip(candidate.text[match.end() :])
        words = phrase.split()
        if len(words) >= 2 and _novel(phrase, keys) >= 0.34:
            return phrase, "the actor's action clause"
    return None


def _remainder(candidate: Candidate, keys: set[str]) -> tuple[str, str] | None:
    """The longest run of the sentence the question does not already say (the answer's new part)."""
    tokens = re.findall(r"[A-Za-z0-9'’-]+|[^\sA-Za-z0-9]", candidate.text)
    runs: list[list[str]] = [[]]
    for token in tokens:
        if re.fullmatch(r"[^\sA-Za-z0-9]", token):
            if token in '.;:!?"“”':
                runs.append([])
            elif runs[-1]:
                runs[-1].append(token)
            continue
        if token.lower() not in STOPWORDS_EN and term_key(token) in keys:
            runs.append([])
        else:
            runs[-1].append(token)
    best = None
    for run in runs:
        content = [w for w in run if re.match(r"\w", w) and w.lower() not in STOPWORDS_EN]
        while run and (run[-1].lower() in STOPWORDS_EN or not re.match(r"\w", run[-1])):
            run = run[:-1]
        while run and (
            not re.match(r"\w", run[0]) or run[0].lower() in ("and", "but", "or", "that", "which")
        ):
            run = run[1:]
        if content and run and (best is None or len(content) > best[0]):
            best = (len(content), run)
    if best is None or best[0] == 0:
        return None
    phrase = re.sub(r"\s+([,'’])", r"\1", " ".join(best[1][:MAX_WORDS]))
    return phrase, "the part of the sentence the question does not already say"


def typed_span(
    question: str, form: QuestionForm, candidate: Candidate, keys: set[str], find: EntityFinder | None
) -> tuple[str, str, str] | None:
    """(phrase, kind, method) of the asked type in one sentence, or None."""
    lowered = question.lower().strip()
    lead = LEADING_WH.match(lowered)  # "What did she do when ..." asks what, not when
    if lead:
        form = replace(form, wh={"whom": "who", "whose": "who"}.get(lead.group(1), lead.group(1)))
    if form.wh == "who" or re.match(r"(?:which|what)\s+(?:character|person|man|woman|girl|boy)\b", lowered):
        found = _who(question, candidate, keys, find)
        return (found[0], "who", found[1]) if found else None
    if form.wh == "where":
        found = _where(candidate, keys, find, lowered)
        return (found[0], "where", found[1]) if found else None
    if form.wh == "when":
        found = _when(candidate, keys)
        return (found[0], "when", found[1]) if found else None
    if form.wh == "why" or re.match(r"what (?:made|caused|led|prompted)\b", lowered):
        found = _why(candidate, keys)
        return (found[0], "why", found[1]) if found else None
    if form.wh == "how":
        if re.search(r"\bfeel|\bfelt\b|\bemotion", lowered):
            found = _feeling(candidate, keys)
            return (found[0], "feeling", found[1]) if found else None
        if not re.match(r"how (?:many|much|long|old|far|often)\b", lowered):
            match = MEANS.search(candidate.text)
            if match:
                phrase = _clip(candidate.text[match.start() :])
                if _novel(phrase, keys) > 0:
                    return phrase, "how", 'the means ("by ..." / "with ...")'
    action = ACTION.match(lowered)
    if action:
        found = _action(action.group(1), candidate, keys)
        if found:
            return found[0], "action", found[1]
    if form.wh in ("what", "which") and re.match(
        r"what (?:did|does|do|was|were|is|are)\b.*\b(?:find|found|give|gave|"
        r"get|got|see|saw|hear|heard|want|wanted|wish|wished|ask|asked|name)\b",
        lowered,
    ):
        # An object asked for by a verb the sentence repeats: what follows the question's words.
        found = _remainder(candidate, keys)
        return (found[0], "what", found[1]) if found and len(found[0].split()) >= 2 else None
    return None
