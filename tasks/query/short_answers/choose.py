"""Short answers of the asked type, cut from the best evidence sentences (offline, no LLM).

First a clause read around the question's own words (tasks.query.short_answers.clauses and its siblings):
what follows the question's event ("What did X do when Y?", "What happened after Y?"); the cause
beside the clause stating a why-question's predicate; a feeling named beside the event (or shown
by a reaction, said so); the noun phrase before a who-question's verb; what follows a what- or
how-question's verb; the place phrase after a where-question's verb. Otherwise the typed span of
the best sentences that has one (tasks.query.short_answers.spans). When no typed span is found the answer is
the sentence stating the question's predicate (else the best sentence), and the result says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from tasks.query.options.rules import term_key
from tasks.query.question_form import QuestionForm
from tasks.query.short_answers.causes import cause_answer
from tasks.query.short_answers.clauses import (
    anchor_sentence,
    event_answer,
    predicate_keys,
    read_event_question,
)
from tasks.query.short_answers.feelings import feeling_answer
from tasks.query.short_answers.objects import object_answer, place_answer, subject_answer
from tasks.query.short_answers.spans import Candidate, EntityFinder, question_keys, typed_span
from tasks.text import CJK_CHAR, content_words

# Candidate and EntityFinder are part of this module's interface (callers build candidates for it).
__all__ = ["Candidate", "EntityFinder", "ShortAnswer", "short_answer"]
SPAN_MARGIN = 0.12  # a lower-ranked sentence may give the span when its score is this close to the best


@dataclass(frozen=True)
class ShortAnswer:
    text: str
    kind: str  # who | where | when | why | how | feeling | action | what | sentence
    typed: bool  # False: no typed span found, the whole sentence is the answer
    quote: str
    section_id: str | None
    method: str  # how the span was found, for the notes

    def note(self) -> str:
        if self.typed:
            return f"short answer ({self.kind}): {self.method}"
        return f"short answer: no typed span found ({self.method}); the answer is the best sentence"


def _clause_answer(
    question: str,
    form: QuestionForm,
    candidates: Sequence[Candidate],
    keys: set[str],
    objects: bool,
    find: EntityFinder | None = None,
) -> ShortAnswer | None:
    """A clause read around the question's event, cause or verb (tasks.query.short_answers.clauses,
    short_causes, short_objects), or None."""
    lowered = question.lower().strip()
    triples = [(c.text, c.before, c.after) for c in candidates]
    found, kind = None, ""
    if form.wh == "how" and re.search(r"\bfeel|\bfelt\b", lowered):
        found, kind = feeling_answer(question, triples), "feeling"
    event = read_event_question(question)
    if not found and event is not None:
        found, kind = event_answer(event, triples, keys), "action" if event.acts else "outcome"
    if not found and (form.wh == "why" or re.match(r"what (?:made|caused|led|prompted)\b", lowered)):
        found, kind = cause_answer(question, triples), "why"
    if not found and form.wh == "who":
        actors = [c.actor for c in candidates]
        found, kind = subject_answer(question, [c.text for c in candidates], actors, keys), "who"
        bare = found and re.fullmatch(r"[A-Z][\w'’-]*(?:\s+[A-Z][\w'’-]*)*", found[0])
        named = [f for f in (find(found[0]) if bare and find is not None else []) if f[3] != "location"]
        if found and named:  # the subject is a name: the entity's canonical name
            found = (named[0][2], found[1], found[2] + " (canonical name from the graph)")
    if not found and form.wh == "where":
        found, kind = place_answer(question, [c.text for c in candidates], keys), "where"
    if not found and objects:
        found, kind = object_answer(question, [c.text for c in candidates], keys), form.wh
    if not found:
        return None
    phrase, index, method = found
    support = candidates[index]
    kind = "what" if kind == "which" else kind
    return ShortAnswer(phrase, kind, True, support.text, support.section_id, method)


def short_answer(
    question: str,
    form: QuestionForm,
    candidates: Sequence[Candidate],
    find: EntityFinder | None = None,
    who: tuple[str, Candidate | None] | None = None,
) -> ShortAnswer | None:
    """The typed phrase from the best sentence that has one (within SPAN_MARGIN of the best score),
    else the best sentence itself; None without candidates. `who` is the graph's answer to a
    who-question (the character acting on the question's things, and the sentence saying so), if any."""
    if not candidates:
        return None
    best = candidates[0]
    # A sentence answer is the best line that says something: a scene heading only places it.
    line = next((c for c in candidates if not c.heading), best)
    if who and form.wh == "who":
        name, support = who
        key = name.lower().split()[0]
        support = support or next(
            (c for c in candidates if key in c.text.lower() or (c.actor or "").lower() == name.lower()), best
        )
        return ShortAnswer(
            name,
            "who",
            True,
            support.text,
            support.section_id,
            "the character named last before the question's things in the scenes naming them all (graph)",
        )
    if CJK_CHAR.search(question) or form.wh in ("yesno", "other"):
        reason = (
            "Chinese question" if CJK_CHAR.search(question) else f"a {form.wh} question has no typed slot"
        )
        return ShortAnswer(line.text, "sentence", False, line.text, line.section_id, reason)
    keys = question_keys(question) | {term_key(w) for w in content_words(question)}
    lowered = question.lower().strip()
    found = _clause_answer(question, form, candidates, keys, form.wh in ("what", "which"), find)
    if found:
        return found
    for candidate in candidates:
        if candidate.score < best.score - SPAN_MARGIN:
            break
        span = typed_span(question, form, candidate, keys, find)
        if span:
            phrase, kind, method = span
            return ShortAnswer(phrase, kind, True, candidate.text, candidate.section_id, method)
    if form.wh == "how" and not re.match(r"how (?:many|much|long|old|far|often|did .+ feel)\b", lowered):
        found = _clause_answer(question, form, candidates, keys, objects=True)
        if found:
            return found
    predicate = predicate_keys(question)
    lines = [c for c in candidates if not c.heading] or list(candidates)
    anchored = anchor_sentence([c.text for c in lines], predicate, 0.34) if predicate else None
    if anchored is not None:  # the sentence that says most of the question's predicate
        support = lines[anchored[0]]
        reason = f"no {form.wh} span in the best sentences; the sentence stating the question's predicate"
        return ShortAnswer(support.text, "sentence", False, support.text, support.section_id, reason)
    return ShortAnswer(
        line.text, "sentence", False, line.text, line.section_id, f"no {form.wh} span in the best sentences"
    )
