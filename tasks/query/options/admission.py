"""Multiple-choice option admission (paper appendix A.5): each option becomes the claim it needs
and is checked against the evidence snippets - direct support, inference, insufficient,
contradiction, wrong relation or wrong grain. The finalizer still decides; `choose_option` is
its rule (admitted options first, then the least unsupported one with the gap recorded).

Offline, support is the weighted share of the option's own distinctive terms (those not already
in the question, weighted by inverse frequency over options and evidence sentences) found in one
evidence sentence near the question's terms, optionally blended with dense similarity. The
problem verdicts are rules on negation cues, actors and causal connectives (option_rules).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from schemas.responses.query import OptionAdmissionReply
from tasks.llm.client.protocol import LLMClient, LLMRequest
from tasks.query.options.claims import option_claim
from tasks.query.options.rules import (
    Sentence,
    actor_mismatch,
    asks_for_cause,
    asks_for_consequence,
    asks_for_exception,
    has_consequence_cue,
    has_negation,
    is_theme_question,
    names_in,
    negated_near,
    reversed_relation,
    term_key,
    terms_of,
    theme_like,
)

__all__ = [
    "EvidenceSnippet",
    "OptionVerdict",
    "option_claim",
    "admit_options",
    "choose_option",
    "admit_options_llm",
    "asks_for_exception",
]

DIRECT_COVERAGE = 0.6  # share of distinctive-term weight one sentence must hold for direct support
PARTIAL_COVERAGE = 0.34  # enough overlap for the option to be about the same thing as the sentence
CONTRADICTION_COVERAGE = 0.5  # a polarity clash counts only on a sentence that clearly restates the option
DIRECT_RELEVANCE = 0.3  # share of the question's terms around that sentence
INFERENCE_SUPPORT = 0.25
DENSE_WEIGHT = 0.3
DENSE_CANDIDATES = 48  # sentences compared densely per question: the lexically closest ones
MAX_EMBEDDED = 12  # of those, at most this many without a stored vector are embedded (query latency)
VERDICT_RANK = {"direct_support": 0, "inference": 1}
# When nothing is admitted: an unknown option beats one the evidence positively argues against.
GAP_RANK = {"insufficient": 0, "wrong_grain": 1, "wrong_relation": 2, "contradiction": 3}
# Question words that say what kind of answer is wanted, not what it is about.
QUESTION_NOISE = frozenset(
    term_key(w)
    for w in """following true false statement statements best describe describes
likely probably story passage according mention mentioned said say reason happen happened""".split()
)
# For NOT / EXCEPT questions: the option the evidence admits least is the answer.
EXCEPTION_RANK = {
    "contradiction": 0,
    "wrong_relation": 1,
    "wrong_grain": 1,
    "insufficient": 2,
    "inference": 3,
    "direct_support": 4,
}
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？…])\s+|\n+|(?<=[。！？])")
Embed = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class EvidenceSnippet:
    snippet_id: str
    text: str
    section_id: str | None
    kind: str
    score: float
    # The stored vector of the snippet (a source sentence or an asset), so it need not be embedded again.
    vector: np.ndarray | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class OptionVerdict:
    option_index: int
    option: str
    claim: str
    verdict: str  # direct_support | inference | insufficient | contradiction | wrong_relation | wrong_grain
    support: float
    evidence_ids: tuple[str, ...]
    reason: str


def _sentences(snippets: Sequence[EvidenceSnippet]) -> list[Sentence]:
    sentences: list[Sentence] = []
    for position, snippet in enumerate(snippets):
        parts = [p.strip() for p in _SENTENCE_BREAK.split(snippet.text or "") if p and p.strip()]
        for index, text in enumerate(parts):
            sentences.append(Sentence(snippet.snippet_id, position, index, text, terms_of(text)))
    return sentences


def _weights(option_terms: list[set[str]], sentences: list[Sentence]) -> dict[str, float]:
    """Inverse frequency over options and sentences, damped for terms that several options share."""
    documents = [*option_terms, *(s.terms for s in sentences)]
    n = len(documents)
    weights: dict[str, float] = {}
    for term in set().union(*option_terms) if option_terms else set():
        df = sum(1 for d in documents if term in d)
        shared = sum(1 for d in option_terms if term in d)
        weights[term] = math.log(1 + (n + 1) / (df + 0.5)) * (1 - (shared - 1) / max(1, len(option_terms)))
    return weights


def _coverage(terms: set[str], distinctive: set[str], weights: dict[str, float]) -> float:
    total = sum(weights[t] for t in distinctive)
    return sum(weights[t] for t in distinctive & terms) / total if total > 0 else 0.0


def _relevance(question_terms: set[str], sentences: list[Sentence], at: int) -> float:
    """Share of the question's terms in a sentence and its neighbours within the same snippet."""
    if not question_terms:
        return 1.0
    here = sentences[at]
    window = set().union(
        *(s.terms for s in sentences[max(0, at - 1) : at + 2] if s.snippet_pos == here.snippet_pos)
    )
    return len(question_terms & window) / len(question_terms)


def _dense_scores(
    embed: Embed | None,
    options: list[str],
    sentences: list[Sentence],
    candidates: list[int],
    snippets: Sequence[EvidenceSnippet],
) -> np.ndarray:
    """Option-to-sentence similarity; stored vectors are reused, only the rest is embedded."""
    scores = np.zeros((len(options), len(sentences)), dtype=np.float64)
    if embed is None or not candidates:
        return scores
    stored = {i: snippets[sentences[i].snippet_pos].vector for i in candidates}
    missing = [i for i in candidates if stored[i] is None][:MAX_EMBEDDED]
    vectors = np.asarray(embed([*options, *(sentences[i].text for i in missing)]), dtype=np.float64)
    option_vectors = vectors[: len(options)]
    for row, i in enumerate(missing):
        stored[i] = vectors[len(options) + row]
    usable = [i for i in candidates if stored[i] is not None and len(stored[i]) == option_vectors.shape[1]]
    if usable:
        similarity = option_vectors @ np.array([stored[i] for i in usable], dtype=np.float64).T
        scores[:, usable] = np.clip(similarity, 0.0, 1.0)
    return scores


def admit_options(
    question: str, options: list[str], snippets: Sequence[EvidenceSnippet], embed: Embed | None = None
) -> list[OptionVerdict]:
    """One verdict per option, in option order, from lexical (and optional dense) evidence checks."""
    sentences = _sentences(snippets)
    question_terms = terms_of(question) - QUESTION_NOISE
    option_terms = [terms_of(o) for o in options]
    distinctive = [(t - question_terms) or t for t in option_terms]
    weights = _weights(distinctive, sentences)
    coverage = np.array([[_coverage(s.terms, d, weights) for s in sentences] for d in distinctive])
    coverage = coverage.reshape(len(options), len(sentences))
    relevance = np.array([_relevance(question_terms, sentences, i) for i in range(len(sentences))])
    # A sentence far from everything the question is about supports an option only weakly.
    strength = coverage * (0.25 + 0.75 * relevance) if sentences else coverage
    order = (
        np.argsort(-(strength.max(axis=0) if len(options) else relevance), kind="stable") if sentences else []
    )
    dense = _dense_scores(
        embed, options, sentences, sorted(int(i) for i in list(order)[:DENSE_CANDIDATES]), snippets
    )
    known_names = names_in(" ".join([question, *options, *(s.text for s in snippets)]), None)
    question_names = names_in(question, known_names)
    verdicts = []
    for k, option in enumerate(options):
        claim = option_claim(question, option)
        if not sentences or not distinctive[k]:
            reason = "no evidence sentences" if not sentences else "the option adds no terms of its own"
            verdicts.append(OptionVerdict(k, option, claim, "insufficient", 0.0, (), reason))
            continue
        combined = (
            strength[k] if embed is None else (1 - DENSE_WEIGHT) * strength[k] + DENSE_WEIGHT * dense[k]
        )
        best = int(np.argmax(combined))  # argmax keeps the first sentence on ties: deterministic
        support = float(round(combined[best], 6))
        sentence, cover = sentences[best], float(coverage[k][best])
        matched = distinctive[k] & sentence.terms
        verdict, reason = _base_verdict(cover, float(relevance[best]), support, sentence)
        problem = _problem(
            question, option, sentence, matched, cover, verdict, question_terms, question_names, known_names
        )
        if problem is not None:
            verdict, reason = problem
        others = [
            sentences[int(i)].snippet_id
            for i in np.argsort(-combined, kind="stable")[:3]
            if combined[int(i)] > 0
        ]
        evidence = tuple(dict.fromkeys([sentence.snippet_id, *others]))[
            : 1 if verdict == "direct_support" else 3
        ]
        verdicts.append(
            OptionVerdict(k, option, claim, verdict, support, evidence if support > 0 else (), reason)
        )
    return verdicts


def _base_verdict(cover: float, relevance: float, support: float, sentence: Sentence) -> tuple[str, str]:
    if cover >= DIRECT_COVERAGE and relevance >= DIRECT_RELEVANCE:
        return "direct_support", (
            f"{sentence.snippet_id} states {cover:.0%} of the option's distinctive terms "
            "beside the question's"
        )
    if support >= INFERENCE_SUPPORT or cover >= PARTIAL_COVERAGE:
        return (
            "inference",
            f"partial support: best sentence in {sentence.snippet_id} covers {cover:.0%} "
            "of its distinctive terms",
        )
    return "insufficient", f"little support: at most {cover:.0%} of its distinctive terms in any sentence"


def _problem(
    question: str,
    option: str,
    sentence: Sentence,
    matched: set[str],
    cover: float,
    verdict: str,
    question_terms: set[str],
    question_names: set[str],
    known_names: set[str],
) -> tuple[str, str] | None:
    """A contradiction, wrong relation or wrong grain that overrides the support verdict, if any."""
    if cover >= CONTRADICTION_COVERAGE and has_negation(option) != negated_near(sentence.text, matched):
        return "contradiction", f"{sentence.snippet_id} states the option's terms with the opposite polarity"
    if cover >= PARTIAL_COVERAGE:
        predicate = question_terms - {term_key(n) for n in question_names}
        actor = actor_mismatch(question, option, sentence.text, predicate, question_names, known_names)
        if actor:
            return (
                "wrong_relation",
                f"{sentence.snippet_id} gives this to {actor}, not to the one the question asks about",
            )
        direction = reversed_relation(
            sentence.text, matched, predicate, asks_for_cause(question), asks_for_consequence(question)
        )
        if direction:
            return "wrong_relation", f"{sentence.snippet_id} {direction}"
    if verdict != "direct_support" and theme_like(option, known_names) and not is_theme_question(question):
        return "wrong_grain", "a broad, theme-like option for a question about a local detail"
    if verdict != "insufficient" and asks_for_cause(question) and has_consequence_cue(option):
        return "wrong_grain", "names a later consequence where the question asks for a cause"
    return None


def choose_option(verdicts: Sequence[OptionVerdict], exception: bool = False) -> tuple[int, str]:
    """The finalizer's pick and a note: admitted options by support, else the least unsupported
    (gap noted)."""
    if not verdicts:
        raise ValueError("no options to choose from")
    letter = lambda v: chr(65 + v.option_index)  # noqa: E731
    if exception:
        pick = min(verdicts, key=lambda v: (EXCEPTION_RANK[v.verdict], v.support, v.option_index))
        return pick.option_index, (
            f"exception question: chose {letter(pick)}, the option the evidence admits least "
            f"({pick.verdict}, support {pick.support:.2f})"
        )
    admitted = [v for v in verdicts if v.verdict in VERDICT_RANK]
    if admitted:
        pick = min(admitted, key=lambda v: (VERDICT_RANK[v.verdict], -v.support, v.option_index))
        rivals = [letter(v) for v in admitted if v is not pick and v.verdict == pick.verdict]
        tail = f"; also {pick.verdict}: {', '.join(rivals)}" if rivals else ""
        return pick.option_index, f"chose {letter(pick)}: {pick.verdict} (support {pick.support:.2f}){tail}"
    pick = min(verdicts, key=lambda v: (GAP_RANK[v.verdict], -v.support, v.option_index))
    return pick.option_index, (
        f"gap: no option is directly supported or inferable; chose {letter(pick)} as the least "
        f"unsupported ({pick.verdict}, support {pick.support:.2f})"
    )


def _format_options(options: list[str]) -> str:
    return "\n".join(f"{chr(65 + i)}. {o.strip()}" for i, o in enumerate(options))


def _format_evidence(snippets: Sequence[EvidenceSnippet], limit: int = 30, chars: int = 500) -> str:
    lines = []
    for snippet in list(snippets)[:limit]:
        text = " ".join((snippet.text or "").split())
        lines.append(
            f"[{snippet.snippet_id}] ({snippet.kind}) {text[:chars]}{'…' if len(text) > chars else ''}"
        )
    return "\n".join(lines) or "(no evidence)"


def admit_options_llm(
    client: LLMClient,
    request_factory: Callable[[str, dict[str, Any]], LLMRequest],
    question: str,
    options: list[str],
    snippets: Sequence[EvidenceSnippet],
    embed: Embed | None = None,
) -> list[OptionVerdict]:
    """The LLM's verdict per option (support from the offline check ranks ties); offline when the
    reply is unusable."""
    offline = admit_options(question, options, snippets, embed)
    values = {
        "question": question,
        "options": _format_options(options),
        "evidence": _format_evidence(snippets),
    }
    result = client.structured(request_factory("admit_options/v1", values), OptionAdmissionReply)
    reply = result.value
    letters = {chr(65 + i): i for i in range(len(options))}
    if reply is None or {j.option for j in reply.options} != set(letters):
        return offline  # a failed call, or a reply that skips or invents options
    known = {s.snippet_id for s in snippets}
    verdicts = []
    for judgement in sorted(reply.options, key=lambda j: letters[j.option]):
        index = letters[judgement.option]
        ids = tuple(dict.fromkeys(i for i in judgement.evidence_ids if i in known))
        verdicts.append(
            OptionVerdict(
                index,
                options[index],
                judgement.claim.strip(),
                judgement.verdict,
                offline[index].support,
                ids,
                judgement.reason.strip() or "llm",
            )
        )
    return verdicts
