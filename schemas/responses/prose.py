"""Prose a model writes into a reply (an episode's summary, a storyline's description): bounded in
length, and with the repeats of a looping model taken out.

A small model that loops writes one sentence again and again until the string's limit ("Daniel
comes in, cheerful, and sets the brass key on the desk." thirty times in a 2,000-character
summary). Every later prompt that shows the summary (episode relations, shortcut judgments,
storylines, summaries) then pays for the loop, and a reader learns nothing from it. The length
cap is the grammar's (a server stops the loop there); the validator keeps the first telling of
each sentence and of each long clause, and drops a cut-off tail that only starts a sentence
already written.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")
_CLAUSE_GAP = re.compile(r"(?<=[,;，；])\s*")
MIN_CLAUSE_WORDS = 4  # shorter clauses ("he said,") repeat in good prose too


def prose_key(text: str) -> str:
    """A sentence or clause as compared for repeats: case and spacing ignored."""
    return " ".join(text.lower().split()).strip(" ,;，；")


def _without_repeated_clauses(sentence: str) -> str:
    clauses = _CLAUSE_GAP.split(sentence)
    kept: list[str] = []
    seen: set[str] = set()
    for clause in clauses:
        key = prose_key(clause)
        if key in seen and len(key.split()) >= MIN_CLAUSE_WORDS:
            continue
        seen.add(key)
        kept.append(clause)
    if len(kept) == len(clauses):
        return sentence
    joined = " ".join(part.strip() for part in kept if part.strip()).rstrip(",;，； ")
    # The sentence's closing mark stays when the clause that carried it was a dropped repeat.
    end = re.search(r"[.!?。！？]$", sentence.strip())
    return joined if end is None or joined.endswith(end.group(0)) else joined + end.group(0)


def without_repeats(text: str) -> str:
    """`text` with each sentence (and each clause of at least `MIN_CLAUSE_WORDS` words inside a
    sentence) kept at its first telling only; an unfinished last sentence that merely begins one
    already kept is dropped. Text without repeats comes back unchanged."""
    sentences = [s for s in _SENTENCE_END.split(text.strip()) if s.strip()]
    kept: list[str] = []
    seen: set[str] = set()
    for sentence in sentences:
        key = prose_key(sentence)
        if key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    if len(kept) > 1 and not re.search(r"[.!?。！？\"'”’)]$", kept[-1].strip()):
        tail = prose_key(kept[-1])
        if any(other.startswith(tail) for other in seen if other != tail):
            kept.pop()
    cleaned = [_without_repeated_clauses(s) for s in kept]
    return text if cleaned == sentences else _join(cleaned)


def _join(sentences: list[str]) -> str:
    out = ""
    for sentence in sentences:
        sentence = sentence.strip()
        if out and not re.search(r"[。！？]$", out):
            out += " "
        out += sentence
    return out


# A string field of model-written prose; its length cap is set where it is used, with `Field`.
Prose = Annotated[str, AfterValidator(without_repeats)]
