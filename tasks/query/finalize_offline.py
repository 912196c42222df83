"""The offline finalizer: answers from the assembled evidence board without an LLM.

Free-text questions get the source sentence that best fits the question's form, scored
against the question and boosted by the board's structured support (facts, units and
entities grounded in the same passage); multiple choice goes through option admission and
the finalizer's choice rule. Answers are labelled offline.
"""

from __future__ import annotations

import numpy as np

from tasks.query.finalize import FinalAnswer
from tasks.query.evidence_board import EvidenceBoard
from tasks.query.options.admission import EvidenceSnippet, admit_options, asks_for_exception, choose_option
from tasks.query.plan import QueryIntents
from tasks.query.question_form import answer_cue_bonus
from tasks.text import content_words
from tasks.query.tools.env import ToolEnv


def passage_sentences(env: ToolEnv, board: EvidenceBoard) -> list[tuple[int, str]]:
    """(sentence position, passage chunk id) for every sentence inside a chosen passage."""
    sentences = env.store.source.sentences
    chunk_ids = sentences["chunk_id"].to_numpy()
    starts = sentences["char_start"].to_numpy()
    ends = sentences["char_end"].to_numpy()
    found: list[tuple[int, str]] = []
    for passage in board.passages:
        mask = (chunk_ids == passage.chunk_id) & (starts >= passage.char_start) & (ends <= passage.char_end)
        found.extend((int(p), passage.chunk_id) for p in np.flatnonzero(mask))
    return found


def _structured_terms(board: EvidenceBoard) -> dict[str, set[str]]:
    """Content words the board's structured items contribute, per source chunk."""
    terms: dict[str, set[str]] = {}
    for items in (board.entities, board.narrative, board.relations):
        for item in items:
            for row in [item.row, *item.facts]:
                for chunk_id in row.source_chunk_ids[:1]:
                    terms.setdefault(chunk_id, set()).update(content_words(row.text))
    return terms


def rank_sentences(env: ToolEnv, question: str, intents: QueryIntents, board: EvidenceBoard) -> list[tuple[int, float]]:
    """Passage sentences by answer score (question fit, form cues, structured support)."""
    candidates = passage_sentences(env, board)
    if not candidates:
        return []
    source = env.store.source
    positions = np.array([p for p, _ in candidates])
    lexical = source.sentence_bm25.scores(question)[positions]
    top = float(lexical.max())
    lexical = lexical / top if top > 0 else lexical
    vector = env.vector(question)
    dense = source.sentence_vectors[positions] @ vector if vector is not None and \
        source.sentence_vectors.shape[1] == vector.shape[-1] else np.zeros(len(positions))
    support = {p.chunk_id: p.support for p in board.passages}
    best_support = max(support.values()) or 1.0
    structured = _structured_terms(board)
    question_terms = content_words(question)
    scores = []
    for index, (position, chunk_id) in enumerate(candidates):
        text = source.sentences.iloc[position]["text"]
        terms = content_words(text)
        backed = len(terms & structured.get(chunk_id, set()) - question_terms) / max(1, len(terms))
        short = 0.15 if len(text.split()) < 3 and not any("\u4e00" <= c <= "\u9fff" for c in text) else 0.0
        scores.append(0.4 * dense[index] + 0.35 * lexical[index] + 0.1 * support[chunk_id] / best_support
                      + 0.1 * backed + answer_cue_bonus(intents.form, text) - short)
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i][0]))
    return [(candidates[i][0], float(scores[i])) for i in order]


def offline_finalizer(env: ToolEnv, question: str, options: list[str] | None, intents: QueryIntents,
                      board: EvidenceBoard, skills: list[str]) -> FinalAnswer:
    ranked = rank_sentences(env, question, intents, board)
    sentences = env.store.source.sentences
    quotes = [(sentences.iloc[p]["section_id"], sentences.iloc[p]["text"]) for p, _ in ranked[:2]]
    notes = ["offline: extractive answer from the evidence board (no LLM)"]
    if not options:
        text = quotes[0][1] if quotes else "No answer found in the assembled evidence."
        return FinalAnswer(text, quotes=quotes, notes=notes)

    vectors = env.store.source.sentence_vectors
    snippets = [EvidenceSnippet(sentences.iloc[p]["sentence_id"], sentences.iloc[p]["text"], sentences.iloc[p]["section_id"],
                                "sentence", score, vectors[p] if vectors.shape[1] > 1 else None) for p, score in ranked[:40]]
    for items in (board.entities, board.narrative, board.relations):
        for item in items:
            for row in [item.row, *item.facts]:
                snippets.append(EvidenceSnippet(row.item_id, row.text, row.section_id, row.kind, row.score,
                                                env.store.asset_vector(row.kind, row.item_id)))
    verdicts = admit_options(question, options, snippets, env.embed_texts)
    chosen, note = choose_option(verdicts, exception=asks_for_exception(question))
    notes.append(note)
    notes.extend(f"option {chr(65 + v.option_index)}: {v.verdict} ({v.support:.2f}) {v.reason}" for v in verdicts)
    return FinalAnswer(options[chosen], chosen, [round(v.support, 4) for v in verdicts], quotes, notes)
