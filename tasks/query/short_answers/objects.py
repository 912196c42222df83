"""What follows the question's verb, offline: "What did X give Y?" -> what X gave; "What did X ask Y
to do?" -> the infinitive after the verb; "How did X escape?" -> how the escape is told.

The question's main verb is the word after its grammatical subject; the supporting sentence is the
best-ranked one that uses a form of that verb (base, -s, -ed, -ing or the irregular past) together
with most of the question's other words, and the answer is the rest of that clause after the verb,
without the words the question already says. Surface English cues only.
"""

from __future__ import annotations

import re

from tasks.query.options.verbs import IRREGULAR_PAST
from tasks.query.short_answers.clauses import clauses, gather, keys_of, novelty, split_question, verb_base
from tasks.text import STOPWORDS_EN

OBJECT_QUESTION = re.compile(r"^\W*(?:what|how|which|whom|where)\b", re.IGNORECASE)
LIGHT_VERBS = frozenset("do be have happen feel look seem".split())
OBJECT_PRONOUN = re.compile(r"^(?:him|her|them|it|me|us|you|himself|herself|themselves)\s+", re.IGNORECASE)


def verb_forms(verb: str) -> set[str]:
    base = verb.lower()
    forms = {base, base + "s", base + "es", base + "ed", base + "d", base + "ing"}
    if base.endswith("e"):
        forms |= {base[:-1] + "ing", base + "d"}
    if base.endswith("y"):
        forms |= {base[:-1] + "ied", base[:-1] + "ies"}
    if re.search(r"[^aeiou][aeiou][bdgmnprt]$", base):
        forms |= {base + base[-1] + "ed", base + base[-1] + "ing"}
    if base in IRREGULAR_PAST:
        forms.add(IRREGULAR_PAST[base])
    return forms


def drop_said(tail: str, keys: set[str]) -> str:
    """The tail without its leading words up to the last one the question already says ("the tin by
    prising the lid" for "How did Tom open the tin?" -> "by prising the lid")."""
    words = tail.split()
    cut = 0
    for index, word in enumerate(words[:6]):
        if word.lower() not in STOPWORDS_EN and keys_of(word) and keys_of(word) <= keys:
            cut = index + 1
        elif word.lower() not in STOPWORDS_EN:
            break
    return " ".join(words[cut:])


def question_verb(question: str) -> tuple[str, str] | None:
    """(main verb, the words after it) of "What/How did <subject> <verb> ...?"."""
    if not OBJECT_QUESTION.match(question):
        return None
    parts = split_question(question)
    if parts is None:
        return None
    _, verb, rest = parts
    base = verb_base(verb) or verb
    if base in LIGHT_VERBS or verb in STOPWORDS_EN:
        return None
    return base, rest


PLACE_PHRASE = re.compile(
    r"\b(?:in|at|on|into|inside|under|behind|near|beside|by|across|through|over|onto|to|from|outside|"
    r"within|beneath|towards?|up|down)\s+(?:(?:the|a|an|his|her|their|its|my|our|this|that)\s+|(?=[A-Z]))"
    r"[^,.;:!?]+"
)
PLACE_END = re.compile(
    r"\s+(?:to|and|but|where|when|while|who|which|that|as|until|for|with)\s", re.IGNORECASE
)


def place_answer(question: str, texts: list[str], question_keys: set[str]) -> tuple[str, int, str] | None:
    """(place phrase, index of the supporting text, method): the first place phrase (a preposition and
    a noun phrase) after the question's verb in the clause that uses it."""
    found = verb_tails(question, texts)
    for index, tail, verb in found:
        for match in PLACE_PHRASE.finditer(tail):
            phrase = PLACE_END.split(match.group(0), maxsplit=1)[0].strip()
            phrase = " ".join(phrase.split()[:8])
            if novelty(phrase, question_keys) >= 0.5:
                return phrase, index, f'the place phrase after the question\'s verb ("{verb}")'
    return None


def verb_tails(question: str, texts: list[str]) -> list[tuple[int, str, str]]:
    """(text index, the clause's words after the question's verb and the next clause, the verb form)
    for each clause using the question's verb with most of the question's other words, best first."""
    found = question_verb(question)
    if found is None:
        return []
    verb, rest = found
    rest_keys = keys_of(rest)
    pattern = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, verb_forms(verb)))), re.IGNORECASE)
    tails = []
    for index, text in enumerate(texts):
        parts = clauses(text)
        for number, part in enumerate(parts):
            match = pattern.search(part)
            context = keys_of(" ".join(parts[max(0, number - 1) : number + 2]))
            if match and (not rest_keys or len(rest_keys & context) / len(rest_keys) >= 0.5):
                tail = ", ".join([part[match.end() :], *parts[number + 1 : number + 2]])
                tails.append((index, tail, match.group(0)))
    return tails


def object_answer(question: str, texts: list[str], question_keys: set[str]) -> tuple[str, int, str] | None:
    """(phrase, index of the supporting text, method): the clause after the question's verb."""
    found = question_verb(question)
    if found is None:
        return None
    verb, rest = found
    forms = verb_forms(verb)
    rest_keys = keys_of(rest)
    pattern = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, forms))), re.IGNORECASE)
    wants_infinitive = bool(re.search(r"\bto do\b", rest))
    for index, text in enumerate(texts):
        parts = clauses(text)
        for number, part in enumerate(parts):
            match = pattern.search(part)
            if not match:
                continue
            tail = part[match.end() :]
            context = keys_of(" ".join(parts[max(0, number - 1) : number + 2]))
            if rest_keys and len(rest_keys & context) / len(rest_keys) < 0.5:
                continue
            if wants_infinitive:
                to = re.search(r"\bto\s+", tail)
                if not to:
                    continue
                tail = tail[to.end() :]
            tail = drop_said(OBJECT_PRONOUN.sub("", tail.strip(" ,")), question_keys)
            phrase = gather([tail, *parts[number + 1 :]], question_keys)
            if len(phrase.split()) >= 2 and novelty(phrase, question_keys) >= 0.5:
                return phrase, index, f'what follows the question\'s verb ("{match.group(0)}")'
    return None


WHO_QUESTION = re.compile(r"^\W*who\s+(?P<verb>[a-z]+)\b(?P<rest>.*?)\??\s*$", re.IGNORECASE)
NOUN_PHRASE = re.compile(
    r"(?:\b(?i:the|a|an|his|her|their|its|my|our|this|that|some|two|three)\s+(?:[\w'’-]+\s+){0,3}[\w'’-]+"
    r"|\b[A-Z][\w'’-]*(?:\s+(?:of\s+)?[A-Z][\w'’-]*)*)\s*,?\s*$"
)
RELATIVE = re.compile(r",?\s*\b(?:who|that|which)\s*$", re.IGNORECASE)
PRONOUN = re.compile(r"\b(?:he|she|they|it)\s*$", re.IGNORECASE)


DETERMINERS = frozenset("the a an his her their its my our this that some".split())
LEADING_ADVERBS = frozenset("now then so but and when once there here yet still".split())


def _trim_phrase(phrase: str) -> str:
    """A noun phrase from its last determiner on, or after its last other function word ("the
    cowhouse to young Denis" -> "young Denis"), without a leading adverb ("Now Aziliez" -> "Aziliez")."""
    words = phrase.strip(" ,").split()
    for index in range(len(words) - 1, 0, -1):
        word = words[index].lower()
        if word in DETERMINERS:
            words = words[index:]
            break
        if word in STOPWORDS_EN and word != "of":
            words = words[index + 1 :]
            break
    while words and words[0].lower() in LEADING_ADVERBS:
        words = words[1:]
    return " ".join(words)


def subject_answer(
    question: str, texts: list[str], actors: list[str | None], question_keys: set[str]
) -> tuple[str, int, str] | None:
    """(subject, index of the supporting text, method) for "Who <verb> ...?": the noun phrase before
    the question's verb in the clause that says the rest of the question (a relative "who" reads the
    phrase before it; a pronoun reads the character it stands for, when known)."""
    match = WHO_QUESTION.match(question.strip())
    if not match:
        return None
    verb = match.group("verb").lower()
    forms = verb_forms(verb_base(verb) or verb) | {verb}
    rest_keys = keys_of(match.group("rest"))
    pattern = re.compile(r"\b(?:%s)\b" % "|".join(sorted(map(re.escape, forms))), re.IGNORECASE)
    for index, text in enumerate(texts):
        for found in pattern.finditer(text):
            after = keys_of(text[found.end() : found.end() + 120])
            if rest_keys and len(rest_keys & after) / len(rest_keys) < 0.5:
                continue
            before = re.split(r"[;:!?\"“”]|\.\s", text[: found.start()])[-1].rstrip()
            if PRONOUN.search(before):
                if actors[index]:
                    return actors[index], index, "the character the pronoun before the verb stands for"
                continue
            before = RELATIVE.sub("", before)
            phrase = NOUN_PHRASE.search(before)
            subject = _trim_phrase(phrase.group(0)) if phrase else ""
            if subject and novelty(subject, question_keys) >= 0.5:
                return subject, index, "the noun phrase before the question's verb"
    return None
