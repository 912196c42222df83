"""The offline answerer: picks the evidence sentences that best answer the question's form,
and for multiple choice the option best supported by the evidence. No LLM is involved, and
answers say so."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from tasks.query.question_form import QuestionForm, answer_cue_bonus
from tasks.query.store.doc_index import DocumentIndex
from tasks.text import content_words, count_words, index_terms

EmbedFn = Callable[[Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class ExtractiveResult:
    text: str
    sentence_positions: list[int]  # rows of DocumentIndex.sentences used as quotes
    chosen_option: int | None = None
    option_scores: list[float] | None = None


def _normalise(values: np.ndarray) -> np.ndarray:
    top = float(values.max()) if values.size else 0.0
    return values / top if top > 0 else values


def score_sentences(
    index: DocumentIndex,
    question: str,
    form: QuestionForm,
    chunk_ids: list[str],
    query_vector: np.ndarray | None,
    sentence_ranks: dict[int, int] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(sentence positions inside the evidence chunks, their answer scores); with `sentence_ranks`
    (sentence position -> rank of its evidence unit) the evidence is those sentences instead."""
    sentences = index.sentences
    if sentence_ranks is None:
        rank_of_chunk = {chunk_id: rank for rank, chunk_id in enumerate(chunk_ids)}
        mask = sentences["chunk_id"].isin(rank_of_chunk).to_numpy()
        positions = np.flatnonzero(mask)
        ranks = [rank_of_chunk[c] for c in sentences["chunk_id"].to_numpy()[positions]]
    else:
        positions = np.array(sorted(sentence_ranks), dtype=np.int64)
        ranks = [sentence_ranks[int(p)] for p in positions]
    if positions.size == 0:
        return positions, np.zeros(0, dtype=np.float32)
    lexical = _normalise(index.sentence_bm25.scores(question)[positions])
    dense = np.zeros(positions.size, dtype=np.float32)
    if query_vector is not None and index.sentence_vectors.shape[1] == query_vector.shape[-1]:
        dense = index.sentence_vectors[positions] @ query_vector.reshape(-1)
    texts = sentences["text"].to_numpy()[positions]
    chunk_prior = np.array([0.1 / (1 + rank) for rank in ranks])
    cue = np.array([answer_cue_bonus(form, t) for t in texts])
    too_short = np.array(
        [0.15 if len(t.split()) < 3 and not re.search(r"[\u4e00-\u9fff]{4}", t) else 0.0 for t in texts]
    )
    return positions, 0.45 * dense + 0.45 * lexical + chunk_prior + cue - too_short


def _option_support(
    option: str,
    question: str,
    texts: list[str],
    vectors: np.ndarray,
    option_vector: np.ndarray | None,
    idf: Callable[[str], float],
) -> float:
    # Terms the option shares with the question say nothing about which option is right.
    question_terms = content_words(question)
    terms = [t for t in content_words(option) if t not in question_terms] or list(content_words(option))
    weight = sum(idf(t) for t in terms) or 1.0
    best = 0.0
    for row, text in enumerate(texts):
        sentence_terms = set(index_terms(text, "en"))
        lexical = sum(idf(t) for t in terms if t in sentence_terms) / weight
        dense = float(vectors[row] @ option_vector) if option_vector is not None and vectors.size else 0.0
        best = max(best, 0.5 * lexical + 0.5 * dense)
    return best


def paragraph(index: DocumentIndex, order: list[int], max_words: int) -> ExtractiveResult:
    """The first sentences of `order` (best first) until `max_words` words, read in story order."""
    texts = index.sentences["text"].to_numpy()
    taken: list[int] = []
    words = 0
    for position in order:
        if words >= max_words:
            break
        taken.append(position)
        words += max(count_words(str(texts[position]), index.language), 1)
    taken.sort()
    joiner = "" if index.language == "zh" else " "
    return ExtractiveResult(joiner.join(str(texts[p]).strip() for p in taken), taken)


def answer_extractively(
    index: DocumentIndex,
    question: str,
    form: QuestionForm,
    chunk_ids: list[str],
    query_vector: np.ndarray | None,
    options: list[str] | None = None,
    embed: EmbedFn | None = None,
    max_quotes: int = 2,
    sentence_ranks: dict[int, int] | None = None,
    max_words: int | None = None,
) -> ExtractiveResult:
    """The best-supported answer from the evidence chunks (in rank order), or from the evidence
    sentences `sentence_ranks` names (position -> rank of the window holding it). With `max_words`
    (a whole-story question) the answer is a paragraph: the best sentences until that many words,
    in story order."""
    positions, scores = score_sentences(index, question, form, chunk_ids, query_vector, sentence_ranks)
    if positions.size == 0:
        return ExtractiveResult(
            "No answer found in the retrieved evidence.",
            [],
            0 if options else None,
            [0.0] * len(options) if options else None,
        )
    order = [int(positions[i]) for i in np.lexsort((positions, -scores))]
    quotes = order[:max_quotes]
    if not options and max_words:
        return paragraph(index, order, max_words)
    if not options:
        return ExtractiveResult(index.sentences.iloc[quotes[0]]["text"], quotes)
    texts = index.sentences["text"].to_numpy()[positions].tolist()
    vectors = index.sentence_vectors[positions] if index.sentence_vectors.shape[1] > 1 else np.zeros((0, 0))
    option_vectors = embed(options) if embed is not None and vectors.size else None
    n_units = max(1, len(index.sentences))
    postings = index.sentence_bm25.postings

    def idf(term: str) -> float:
        hit = postings.get(term)
        df = len(hit[0]) if hit else 0
        return float(np.log(1 + (n_units - df + 0.5) / (df + 0.5)))

    option_scores = [
        _option_support(
            option,
            question,
            texts,
            vectors,
            option_vectors[i]
            if option_vectors is not None and option_vectors.shape[1] == vectors.shape[1]
            else None,
            idf,
        )
        for i, option in enumerate(options)
    ]
    chosen = int(np.argmax(option_scores))
    return ExtractiveResult(options[chosen], quotes, chosen, [round(s, 4) for s in option_scores])
