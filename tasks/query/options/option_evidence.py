"""Multiple choice offline: each option is scored against evidence retrieved for that option.

Why this exists: scoring every option against the evidence retrieved for the *question* favours
the options that echo the question's own passage (distractors are written that way) and the
longest options (more terms to hit, higher raw similarity), so on QuALITY dev it fell below
chance. Here each option gets its own retrieval over the whole document with the question and
the option as the query, and the comparison between options is normalised:

- the score counts only the option's distinctive terms (not in the question, not shared with
  another option), as a share of their idf weight, so an option's length cancels, in a sentence
  and its neighbours, multiplied by the share of the question's terms present there: evidence
  must hold the question and the option together;
- dense similarity of (question + option) to every sentence, z-scored per option over the
  document (its generic similarity to the text cancels), only breaks ties;
- a negation mismatch between the option and its best evidence sentence, when that sentence
  clearly restates the option, is a contradiction and lowers the score.

Each option's record keeps its evidence sentences, the parts of its score and a verdict on the
option-admission scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from tasks.query.options.rules import has_negation, negated_near, terms_of

EVIDENCE_PER_OPTION = 3
DENSE_TIE = 0.01  # dense similarity only orders options (and evidence) the lexical test leaves tied
CONTRADICTION_COVERAGE = 0.6
CONTRADICTION_PENALTY = 0.5  # share of its lexical support a contradicted option loses
DIRECT_COVERAGE = 0.6
DIRECT_RELEVANCE = 0.3
Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class OptionEvidence:
    option_index: int
    score: float
    verdict: str  # direct_support | inference | insufficient | contradiction
    dense: float  # mean z-scored similarity of (question + option) over its evidence
    lexical: float  # best share of the option's distinctive terms near the question's terms
    evidence: tuple[int, ...]  # sentence positions retrieved for this option, best first
    distinctive: tuple[str, ...]
    reason: str


@dataclass
class SentenceTerms:
    """Per-document term sets of every sentence and of its window (with its neighbours), and idf."""

    windows: list[frozenset[str]]
    idf: dict[str, float]
    default_idf: float

    @classmethod
    def build(cls, sentences: pd.DataFrame) -> "SentenceTerms":
        texts = sentences["text"].astype(str).tolist()
        sections = sentences["section_id"].tolist()
        terms = [frozenset(terms_of(t)) for t in texts]
        n = len(terms)
        df: dict[str, int] = {}
        for ts in terms:
            for t in ts:
                df[t] = df.get(t, 0) + 1
        idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        windows = []
        for i in range(n):
            near = [terms[j] for j in (i - 1, i, i + 1) if 0 <= j < n and sections[j] == sections[i]]
            windows.append(frozenset().union(*near))
        return cls(windows, idf, math.log(1 + (n + 0.5) / 0.5))

    def weight(self, term: str) -> float:
        return self.idf.get(term, self.default_idf)


def _coverage(terms: SentenceTerms, wanted: set[str]) -> np.ndarray:
    """Idf-weighted share of `wanted` in every sentence window."""
    total = sum(terms.weight(t) for t in wanted)
    if not wanted or total <= 0:
        return np.zeros(len(terms.windows))
    weights = {t: terms.weight(t) for t in wanted}
    return np.array([sum(w for t, w in weights.items() if t in window) for window in terms.windows]) / total


def distinctive_terms(question: str, options: Sequence[str]) -> list[set[str]]:
    """Each option's terms minus the question's and minus those another option also has."""
    question_terms = terms_of(question)
    option_terms = [terms_of(o) for o in options]
    found = []
    for i, own in enumerate(option_terms):
        shared = (
            set().union(*(t for j, t in enumerate(option_terms) if j != i)) if len(options) > 1 else set()
        )
        found.append((own - question_terms - shared) or (own - question_terms) or own)
    return found


def _zscore(values: np.ndarray) -> np.ndarray:
    std = values.std(axis=0)
    return (values - values.mean(axis=0)) / np.where(std > 1e-9, std, 1.0)


def score_options(
    question: str,
    options: Sequence[str],
    sentences: pd.DataFrame,
    vectors: np.ndarray,
    terms: SentenceTerms,
    embed: Embed | None,
) -> list[OptionEvidence]:
    """One record per option, in option order."""
    n, k = len(sentences), len(options)
    if n == 0 or k == 0:
        return [
            OptionEvidence(i, 0.0, "insufficient", 0.0, 0.0, (), (), "no evidence sentences")
            for i in range(k)
        ]
    dense = np.zeros((n, k))
    if embed is not None and vectors.ndim == 2 and vectors.shape[1] > 1:
        queries = np.asarray(embed([f"{question} {o}".strip() for o in options]), dtype=np.float64)
        if queries.shape[1] == vectors.shape[1]:
            dense = _zscore(vectors.astype(np.float64) @ queries.T)
    relevance = _coverage(terms, terms_of(question))
    distinctive = distinctive_terms(question, options)
    lexical = np.stack([_coverage(terms, d) for d in distinctive], axis=1)
    # Evidence for an option must hold the option's own terms and the question's, in the same window.
    grounded = lexical * relevance[:, None]
    texts = sentences["text"].astype(str).tolist()
    records = []
    for i, option in enumerate(options):
        retrieval = grounded[:, i] + DENSE_TIE * dense[:, i]
        top = [int(p) for p in np.argsort(-retrieval, kind="stable")[:EVIDENCE_PER_OPTION]]
        dense_part = float(dense[top, i].mean())
        lexical_part = float(grounded[top[0], i])
        score = lexical_part + DENSE_TIE * dense_part
        best = top[0]
        matched = set(distinctive[i]) & terms.windows[best]
        verdict, reason = _verdict(
            option, texts[best], matched, float(lexical[best, i]), float(relevance[best]), dense_part
        )
        if verdict == "contradiction":
            score -= CONTRADICTION_PENALTY * lexical_part
        records.append(
            OptionEvidence(
                i,
                round(score, 6),
                verdict,
                round(dense_part, 4),
                round(lexical_part, 4),
                tuple(top),
                tuple(sorted(distinctive[i])),
                reason,
            )
        )
    return records


def _verdict(
    option: str, sentence: str, matched: set[str], cover: float, relevance: float, dense: float
) -> tuple[str, str]:
    if cover >= CONTRADICTION_COVERAGE and has_negation(option) != negated_near(sentence, matched):
        return "contradiction", "its best evidence states the option's terms with the opposite polarity"
    if cover >= DIRECT_COVERAGE and relevance >= DIRECT_RELEVANCE:
        return (
            "direct_support",
            f"its evidence states {cover:.0%} of the option's own terms beside the question's",
        )
    if cover > 0 or dense > 1.5:
        return (
            "inference",
            f"partial support: {cover:.0%} of its own terms, similarity {dense:+.1f} sd above the text",
        )
    return "insufficient", f"none of its own terms near the question; similarity {dense:+.1f} sd"


def choose(records: Sequence[OptionEvidence], exception: bool = False) -> tuple[int, str]:
    """The best-scored option (the worst for NOT / EXCEPT questions) and a note saying why."""
    if not records:
        raise ValueError("no options to choose from")
    ranked = sorted(records, key=lambda r: (-r.score, r.option_index))
    pick = ranked[-1] if exception else ranked[0]
    runner = ranked[-2] if exception else ranked[1] if len(ranked) > 1 else None
    margin = abs(pick.score - runner.score) if runner is not None else 0.0
    letter = chr(65 + pick.option_index)
    kind = "exception question: the option its own evidence supports least" if exception else "best supported"
    return (
        pick.option_index,
        f"chose {letter} ({kind}; {pick.verdict}, score {pick.score:.2f}, margin {margin:.2f})",
    )
