"""The cause a why-question asks for, offline: read around the clause that states the question's
event (its predicate, not only its subject's name).

In the sentence that states the event, the cause is the clause introduced by a causal connective
after it ("because", "since", "for", "as", "so that", "in order to", "to" + verb), or the clause
before "so" when the event follows "so". With no connective there is no typed span (the
sentence is the answer).
"""

from __future__ import annotations

import re

from tasks.query.short_answers.clauses import (
    MAX_WORDS,
    anchor_sentence,
    clauses,
    gather,
    gather_back,
    keys_of,
    predicate_keys,
)

CONNECTIVE = re.compile(
    r"^(?:because of|because|since|for|as|so that|in order to|in order that|seeing that|for fear that|"
    r"due to|to)\b\s*",
    re.IGNORECASE,
)
KEEP_CUE = re.compile(r"^(?:so that|in order to|to)\b", re.IGNORECASE)
RESULT_SO = re.compile(r"^(?:and\s+)?(?:so|therefore|thus|hence)\b(?!\s+that)", re.IGNORECASE)
NOT_CAUSAL_AS = re.compile(
    r"^as\s+(?:if|though|well|soon|much|long|far|a|the|he|she|they|it)\b", re.IGNORECASE
)


def _connective_clause(parts: list[str], start: int, keys: set[str]) -> str | None:
    """The first clause from `start` opened by a causal connective, with what follows it."""
    for index in range(start, len(parts)):
        part = parts[index]
        cue = CONNECTIVE.match(part)
        if not cue or NOT_CAUSAL_AS.match(part) or (cue.group(0).strip().lower() == "to" and index == start):
            continue
        body = part if KEEP_CUE.match(part) else part[cue.end() :]
        phrase = gather([body, *parts[index + 1 :]], keys, MAX_WORDS)
        if len(phrase.split()) >= 2:
            return phrase
    return None


def cause_answer(
    question: str, texts: list[tuple[str, str | None, str | None]]
) -> tuple[str, int, str] | None:
    """(phrase, index of the supporting sentence, method) from (sentence, before, after) triples."""
    keys = predicate_keys(question)
    all_keys = keys_of(question)
    if not keys:
        return None
    found = anchor_sentence([t[0] for t in texts], keys)
    if found is None:
        return None
    index, clause, _ = found
    sentence = texts[index][0]
    parts = clauses(sentence)
    phrase = _connective_clause(parts, clause + 1, all_keys) or _connective_clause(parts, 0, all_keys)
    if phrase:
        return phrase, index, "the clause after a causal connective in the sentence stating the event"
    if RESULT_SO.match(parts[clause]) and clause > 0:
        phrase = gather_back(parts[:clause], all_keys)
        if len(phrase.split()) >= 2:
            return phrase, index, 'the clause before "so" (the question\'s event follows it)'
    return None
