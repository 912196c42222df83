"""Clause-level short answers for questions about events (offline, no LLM).

A question like "What did X do when Y?", "What happened after Y?" or "What will X do after Y?"
names an event Y; the answer is what the text says next. The event is located as the clause of the
supporting sentences that shares most of Y's words, and the answer is the clause that follows it
(the main clause after "When Y, ..." or the next sentence when Y ends its sentence), or the clause
before it for "before Y". "What did X do?" without an event takes X's verb phrase. Surface English
cues only (clause punctuation, subordinators, pronouns): no tagger, nothing fitted to a data set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.query.options.rules import term_key
from tasks.query.options.verbs import BASE_VERBS, IRREGULAR_PAST
from tasks.text import STOPWORDS_EN

MAX_WORDS = 16
# Clause boundaries: punctuation, and a coordinator or subordinator that opens a new clause.
CLAUSE_BREAK = re.compile(
    r"\s*[;:!?\u2014]\s*|\s*,\s*|\s+(?=(?:and then|but|so that|while|until|whereupon)\b)|"
    r"\s+(?=and\s+(?:he|she|they|it|I|we)\b)",
    re.IGNORECASE,
)
EVENT_QUESTION = re.compile(
    r"^\W*what\s+(?:(?P<aux>did|does|do|will|would|had|has|could|should|was|were|is|are)\s+"
    r"(?P<subject>.+?)\s+(?:do|doing|plan to do|want to do|decide to do|try to do)"
    r"|(?P<happen>(?:will\s+|would\s+|had\s+|has\s+)?happen(?:s|ed)?)(?:\s+to\s+(?P<patient>.+?))?)"
    r"(?:\s+(?P<cue>when|after|before|as soon as|once|while|if|because|since|during|at the end of|"
    r"at the end|in the end|next)\b(?P<event>.*?))?\s*\??\s*$",
    re.IGNORECASE,
)
SUBJECT_LEAD = re.compile(r"^(?:and|but|then|so|and then|he|she|they|it|who|which)\s+", re.IGNORECASE)
EXPLAINS = re.compile(r"^(?:because|for|since|as)\b", re.IGNORECASE)
SUBORDINATE = re.compile(r"^(?:when|after|as soon as|once|as|while|if|because|since|before)\b", re.IGNORECASE)


@dataclass(frozen=True)
class EventQuestion:
    subject: str | None  # X in "what did X do" or "what happened to X"
    acts: bool  # "what did X do" (the answer is X's verb phrase), not "what happened"
    cue: str | None  # when / after / before / ... (None: no event named)
    event: str  # Y, the event the answer follows (may be empty)
    future: bool  # "what will ..." (a prediction)


def read_event_question(question: str) -> EventQuestion | None:
    match = EVENT_QUESTION.match(question.strip())
    if not match:
        return None
    cue = (match.group("cue") or "").lower() or None
    future = bool(re.match(r"\W*what\s+(?:will|would)\b", question, re.IGNORECASE))
    subject = match.group("subject") or match.group("patient")
    acts = match.group("subject") is not None
    return EventQuestion(subject, acts, cue, (match.group("event") or "").strip(), future)


def keys_of(text: str) -> set[str]:
    return {term_key(w) for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", text) if w.lower() not in STOPWORDS_EN}


def clauses(text: str) -> list[str]:
    """A sentence's clauses; a fragment of one or two words ("The cat,", "however,") joins the next."""
    parts = [c.strip(" \"'“”‘’()") for c in CLAUSE_BREAK.split(text) if c and c.strip(" \"'“”‘’()")]
    merged: list[str] = []
    carry = ""
    for part in parts:
        whole = f"{carry}, {part}" if carry else part
        if len(part.split()) < 3:
            carry = whole
            continue
        merged.append(whole)
        carry = ""
    if carry:
        if merged:
            merged[-1] = f"{merged[-1]}, {carry}"
        else:
            merged.append(carry)
    return merged


def _words(clause: str) -> int:
    return len(clause.split())


def novelty(clause: str, keys: set[str]) -> float:
    own = keys_of(clause)
    return len(own - keys) / len(own) if own else 0.0


def gather(parts: list[str], keys: set[str], limit: int = MAX_WORDS) -> str:
    """Clauses joined from the first novel one until the word budget is spent."""
    taken: list[str] = []
    for part in parts:
        if not taken and (novelty(part, keys) < 0.5 or _words(part) < 2):
            continue
        if taken and (_words(" ".join(taken)) + _words(part) > limit or novelty(part, keys) < 0.34):
            break
        taken.append(part)
    return _tidy(" ".join(", ".join(taken).split()[:limit]))


def gather_back(parts: list[str], keys: set[str], limit: int = MAX_WORDS) -> str:
    """Like `gather` read backwards from the last clause, returned in the text's order."""
    taken: list[str] = []
    for part in reversed(parts):
        if not taken and (novelty(part, keys) < 0.5 or _words(part) < 2):
            continue
        if taken and (_words(" ".join(taken)) + _words(part) > limit or novelty(part, keys) < 0.34):
            break
        taken.insert(0, part)
    return _tidy(" ".join(", ".join(taken).split()[-limit:]))


def _tidy(phrase: str) -> str:
    """A phrase without a leading connective or a dangling comma."""
    return re.sub(r"^(?:and|but|or|so|then)\s+", "", phrase.strip(" ,"), flags=re.IGNORECASE)


def _opens_with(clause: str, subject: str) -> bool:
    """Whether a clause starts (after a connective) with the subject's last word or a pronoun."""
    head = re.escape(subject.split()[-1])
    return bool(
        re.match(rf"^(?:and |but |then |so |and then )?(?:the |a )?(?:{head}|he|she|they)\b", clause, re.I)
    )


def strip_subject(phrase: str, subject: str = "") -> str:
    """The verb phrase: a leading connective and the subject (a pronoun or the question's own words for
    it) dropped ("and then he ran" -> "ran", "the fisherman put it back" -> "put it back")."""
    own = re.compile(rf"^(?:the\s+|a\s+)?{re.escape(subject.strip())}\s+", re.IGNORECASE) if subject else None
    previous = None
    while previous != phrase:
        previous, phrase = phrase, SUBJECT_LEAD.sub("", phrase)
        phrase = own.sub("", phrase) if own else phrase
    return phrase


def _anchor(sentence: str, event_keys: set[str]) -> tuple[int, float]:
    """The clause of a sentence sharing most of the event's words: (index, share of the event's words)."""
    parts = clauses(sentence)
    best = (-1, 0.0)
    for index, part in enumerate(parts):
        share = len(keys_of(part) & event_keys) / len(event_keys) if event_keys else 0.0
        if share > best[1]:
            best = (index, share)
    return best


def event_answer(
    form: EventQuestion, texts: list[tuple[str, str | None, str | None]], question_keys: set[str]
) -> tuple[str, int, str] | None:
    """(phrase, index of the supporting text, method) for an event question, from (sentence, previous
    sentence, next sentence) triples best first; None when no clause carries the event."""
    event_keys = keys_of(form.event) - (keys_of(form.subject or "") if form.event else set())
    if not form.cue or not event_keys:
        return None
    ranked = []
    for index, (sentence, _, _) in enumerate(texts):
        clause, share = _anchor(sentence, event_keys)
        if share >= 0.5:
            ranked.append((-share, index, clause))
    if not ranked:
        return None
    _, index, clause = min(ranked)
    sentence, previous, following = texts[index]
    parts = clauses(sentence)
    if form.cue == "before":
        before = parts[:clause] or clauses(previous or "")
        phrase = gather_back(before, question_keys)
        method = "the clause before the question's event"
    else:
        # what follows, without the clauses that explain the event ("because ...", "for ...")
        after = [p for p in parts[clause + 1 :] if not EXPLAINS.match(p)]
        if not after or (SUBORDINATE.match(parts[clause]) is None and clause == len(parts) - 1):
            after = after + clauses(following or "")
        if form.acts and form.subject:  # X's own clause: the first one X (or a pronoun) opens
            own = [i for i, p in enumerate(after) if _opens_with(p, form.subject)]
            after = after[own[0] :] if own else after
        phrase = gather(after, question_keys)
        method = "the clause that follows the question's event"
    if form.acts:
        phrase = strip_subject(phrase, re.sub(r"^(?:the|a|an)\s+", "", form.subject or "", flags=re.I))
    return (phrase, index, method) if _words(phrase) >= 2 else None


QUESTION_SUBJECT = re.compile(
    r"^\W*(?i:why|what|how|when|where|who|whom)\s+(?:\w+\s+)??(?i:did|does|do|was|were|is|are|had|has|would|"
    r"could|will|can|should)(?:n't|\s+not)?\s+(?P<subject>(?:(?:the|a|an|his|her|their)\s+)?(?:[a-z]+\s+)?"
    r"[A-Z][\w'’-]*(?:\s+(?:[A-Z][\w'’-]*|of|the))*?(?:\s+[A-Z][\w'’-]*)?|(?:the|a|an|his|her|their)\s+"
    r"[a-z]+|[a-z]+)\b"
)


AUXILIARY = re.compile(
    r"^\W*(?i:why|what|how|when|where|who|whom)\s+(?:\w+\s+)??(?i:did|does|do|was|were|is|are|had|has|"
    r"would|could|will|can|should)(?:n't|\s+not)?\s+"
)
PAST_BASE = {past: base for base, past in IRREGULAR_PAST.items()}
# Common verbs of narrative the shared verb lexicon lacks.
VERBS = BASE_VERBS | frozenset(
    """support fetch assume despise defeat beg bid reward whisper seize weave bake sew chop blame praise
recognise sigh nod wave bow kneel pray wander trade borrow forbid""".split()
)


def verb_base(word: str) -> str | None:
    """The base form of a known verb form ("gave" -> "give", "despised" -> None if unknown)."""
    word = word.lower()
    for candidate in (
        word,
        PAST_BASE.get(word, ""),
        re.sub(r"(?:ed|es|s|ing)$", "", word),
        re.sub(r"(?:d|s)$", "", word),
        re.sub(r"ied$|ies$", "y", word),
        re.sub(r"(.)\1(?:ed|ing)$", r"\1", word),
        re.sub(r"ing$", "e", word),
    ):
        if candidate in VERBS:
            return candidate
    return None


def split_question(question: str) -> tuple[str, str, str] | None:
    """(subject, main verb, the rest) of "Wh- <aux> <subject> <verb> <rest>?": the verb is the first
    word after the subject's first word that the verb lexicon knows or that ends in "-ed", else the
    word after the subject's phrase (determiner and capitalised name)."""
    text = question.strip()
    aux = AUXILIARY.match(text)
    if not aux:
        return None
    words = text[aux.end() :].strip(" ?").split()
    for index, word in enumerate(words[1:], start=1):  # a verb the lexicon knows or a past-tense ending
        word = word.strip(",;")
        if verb_base(word) is not None or re.fullmatch(r"[a-z]+ed", word):
            return " ".join(words[:index]), word.lower(), " ".join(words[index + 1 :])
    match = QUESTION_SUBJECT.match(text)
    if not match:
        return None
    rest = text[match.end() :].strip(" ?").split()
    return (match.group("subject"), rest[0].lower(), " ".join(rest[1:])) if rest else None


def predicate_keys(question: str) -> set[str]:
    """The question's words other than its wh-word, auxiliary and grammatical subject: what the
    supporting clause must say (for "Why did the Giant build a wall?": build, wall)."""
    parts = split_question(question)
    rest = f"{parts[1]} {parts[2]}" if parts else question
    return keys_of(rest) - {"why", "what", "how"}


def anchor_sentence(texts: list[str], keys: set[str], minimum: float = 0.5) -> tuple[int, int, float] | None:
    """(text index, clause index, share) of the clause sharing most of `keys`, best ranked first on ties."""
    best = None
    for index, text in enumerate(texts):
        clause, share = _anchor(text, keys)
        if share >= minimum and (best is None or share > best[2]):
            best = (index, clause, share)
    return best
