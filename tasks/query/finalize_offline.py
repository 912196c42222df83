"""The offline finalizer: answers from the assembled evidence board without an LLM.

Free-text questions get the source sentence that best fits the question's form, scored
against the question and boosted by the board's structured support (facts, units and
entities grounded in the same passage); multiple choice goes through option admission and
the finalizer's choice rule. Answers are labelled offline.
"""

from __future__ import annotations

import re

import numpy as np

from tasks.query.answer_nkw import FinalAnswer
from tasks.query.evidence_board import EvidenceBoard
from tasks.query.plan import QueryIntents
from tasks.query.question_form import answer_cue_bonus
from tasks.query.short_answer import Candidate, EntityFinder, short_answer
from tasks.query.store.document_store import NarrativeStore
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


_FINDERS: dict[int, tuple[NarrativeStore, EntityFinder]] = {}
SHORT_CANDIDATES = 6


def entity_finder(store: NarrativeStore) -> EntityFinder | None:
    """Entities named in a text, by the graph's names and aliases (longest first), with canonical names."""
    if not store.has_graph:
        return None
    cached = _FINDERS.get(id(store))
    if cached is not None and cached[0] is store:
        return cached[1]
    lexicon = [(name, entity_id) for name, entity_id in store.name_lexicon if len(name) >= 2]
    ids = dict(lexicon)
    latin = [re.escape(n) for n, _ in lexicon if not re.search(r"[\u4e00-\u9fff]", n)]
    pattern = re.compile(r"(?<!\w)(?:%s)(?!\w)" % "|".join(latin), re.IGNORECASE) if latin else None

    def find(text: str) -> list[tuple[int, int, str, str]]:
        if pattern is None:
            return []
        found = []
        for match in pattern.finditer(text):
            entity = store.entities_by_id.get(ids.get(match.group(0).lower(), ""))
            if entity is not None:
                found.append((match.start(), match.end(), str(entity["name"]), str(entity["entity_type"])))
        return found

    if len(_FINDERS) > 64:
        _FINDERS.clear()
    _FINDERS[id(store)] = (store, find)
    return find


CONTEXT_WEIGHT = 0.3
PRONOUN_START = re.compile(r"^\W*(?:he|she|they)\b", re.IGNORECASE)


def _context_terms(env: ToolEnv, position: int, window: int = 2) -> set[str]:
    """Terms of a sentence, its neighbours in the same section and the section heading."""
    sentences = env.store.source.sentences
    section_id = sentences.iloc[position]["section_id"]
    lo, hi = max(0, position - window), min(len(sentences), position + window + 1)
    near = sentences.iloc[lo:hi]
    texts = near.loc[near["section_id"] == section_id, "text"].tolist()
    heading, _ = env.store.section_heading(section_id)
    return content_words(" ".join([*texts, heading or ""]))


def _actor(env: ToolEnv, position: int, find: EntityFinder | None) -> str | None:
    """The character a sentence-initial pronoun stands for: the last one named before it in the scene."""
    sentences = env.store.source.sentences
    if find is None or not PRONOUN_START.match(str(sentences.iloc[position]["text"])):
        return None
    section_id = sentences.iloc[position]["section_id"]
    for back in range(position - 1, max(-1, position - 6), -1):
        row = sentences.iloc[back]
        if row["section_id"] != section_id:
            break
        characters = [f for f in find(str(row["text"])) if f[3] == "character"]
        if characters:
            return min(characters)[2]
    return None


def short_candidates(env: ToolEnv, question: str, ranked: list[tuple[int, float]],
                     find: EntityFinder | None) -> list[Candidate]:
    """The best sentences for a short answer: answer score plus how much of the question their scene
    context (neighbours and heading) covers, best first."""
    sentences = env.store.source.sentences
    keys = content_words(question)
    pool = []
    for position, score in ranked[: 4 * SHORT_CANDIDATES]:
        context = len(keys & _context_terms(env, position)) / len(keys) if keys else 0.0
        pool.append((position, score + CONTEXT_WEIGHT * context))
    pool.sort(key=lambda item: (-item[1], item[0]))
    found = []
    for position, score in pool[:SHORT_CANDIDATES]:
        row = sentences.iloc[position]
        section = env.store.sections_by_id.get(row["section_id"], {})
        text = lambda value: value if isinstance(value, str) and value.strip() else None  # noqa: E731
        found.append(Candidate(str(row["text"]), row["section_id"], float(score), text(row.get("speaker")),
                               text(section.get("location")), text(section.get("time_of_day")), _actor(env, position, find)))
    return found


def offline_finalizer(env: ToolEnv, question: str, options: list[str] | None, intents: QueryIntents,
                      board: EvidenceBoard, skills: list[str]) -> FinalAnswer:
    ranked = rank_sentences(env, question, intents, board)
    sentences = env.store.source.sentences
    quotes = [(sentences.iloc[p]["section_id"], sentences.iloc[p]["text"]) for p, _ in ranked[:2]]
    notes = ["offline: extractive answer from the evidence board (no LLM)"]
    if not options:
        find = entity_finder(env.store)
        short = short_answer(question, intents.form, short_candidates(env, question, ranked, find), find)
        if short is None:
            return FinalAnswer("No answer found in the assembled evidence.", quotes=quotes, notes=notes)
        quotes = [(short.section_id, short.quote)] + [q for q in quotes if q[1] != short.quote][:1]
        notes.append(short.note())
        return FinalAnswer(short.text, quotes=quotes, notes=notes, kind=short.kind if short.typed else "sentence")
    from tasks.query.options.admission import EvidenceSnippet, admit_options, asks_for_exception, choose_option

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
