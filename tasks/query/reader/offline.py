"""The offline finalizer: answers from the assembled evidence board without an LLM.

Free-text questions: the evidence sentences are ranked by how well they fit the question's form
(scored against the question, boosted by the board's structured support), then a short answer of
the asked type is cut from the best of them (tasks.query.short_answers.choose), with the graph answering
who-questions about things; the sentence itself is the answer when no typed span is found.
Multiple choice: each option is scored against evidence retrieved for that option over the whole
document (tasks.query.options.option_evidence), with per-option evidence and verdicts in the notes.
Answers are labelled offline.
"""

from __future__ import annotations

import re

import numpy as np

from tasks.query.evidence.board import EvidenceBoard
from tasks.query.options.option_evidence import SentenceTerms, choose, score_options
from tasks.query.options.rules import asks_for_exception
from tasks.query.plan import QueryIntents
from tasks.query.question_form import answer_cue_bonus
from tasks.query.reader.finalize import FinalAnswer
from tasks.query.short_answers.choose import Candidate, EntityFinder, short_answer
from tasks.query.store.document_store import NarrativeStore
from tasks.query.tools.env import ToolEnv
from tasks.text import content_words


def passage_sentences(env: ToolEnv, board: EvidenceBoard) -> list[tuple[int, str]]:
    """(sentence position, passage chunk id) for every sentence inside a chosen passage."""
    starts, ends = env.store.source.sentence_spans
    found: list[tuple[int, str]] = []
    for passage in board.passages:
        positions = env.store.sentences_of_chunk.get(passage.chunk_id, np.zeros(0, dtype=np.int64))
        inside = (starts[positions] >= passage.char_start) & (ends[positions] <= passage.char_end)
        found.extend((int(p), passage.chunk_id) for p in positions[inside])
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


def rank_sentences(
    env: ToolEnv, question: str, intents: QueryIntents, board: EvidenceBoard
) -> list[tuple[int, float]]:
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
    dense = (
        source.sentence_vectors[positions] @ vector
        if vector is not None and source.sentence_vectors.shape[1] == vector.shape[-1]
        else np.zeros(len(positions))
    )
    support = {p.chunk_id: p.support for p in board.passages}
    best_support = max(support.values()) or 1.0
    structured = _structured_terms(board)
    question_terms = content_words(question)
    scores = []
    for index, (position, chunk_id) in enumerate(candidates):
        text = source.sentence_rows[position]["text"]
        terms = content_words(text)
        backed = len(terms & structured.get(chunk_id, set()) - question_terms) / max(1, len(terms))
        short = 0.15 if len(text.split()) < 3 and not any("\u4e00" <= c <= "\u9fff" for c in text) else 0.0
        scores.append(
            0.4 * dense[index]
            + 0.35 * lexical[index]
            + 0.1 * support[chunk_id] / best_support
            + 0.1 * backed
            + answer_cue_bonus(intents.form, text)
            - short
        )
    order = sorted(range(len(candidates)), key=lambda i: (-scores[i], candidates[i][0]))
    return [(candidates[i][0], float(scores[i])) for i in order]


def sentence_terms(store: NarrativeStore) -> SentenceTerms:
    """The document's sentence term windows, built once per loaded store."""
    return store.memo("sentence_terms", lambda: SentenceTerms.build(store.source.sentences))


SHORT_CANDIDATES = 6


def entity_finder(store: NarrativeStore) -> EntityFinder | None:
    """Entities named in a text, by the graph's names and aliases (longest first), with canonical names."""
    if not store.has_graph:
        return None
    return store.memo("entity_finder", lambda: _entity_finder(store))


def _entity_finder(store: NarrativeStore) -> EntityFinder:
    lexicon = [(name, entity_id) for name, entity_id in store.name_lexicon if len(name) >= 2]
    ids = dict(lexicon)
    latin = [re.escape(n) for n, _ in lexicon if not re.search(r"[\u4e00-\u9fff]", n)]
    pattern = re.compile(r"(?<!\w)(?:%s)(?!\w)" % "|".join(latin), re.IGNORECASE) if latin else None
    entities = store.entities_by_id

    def find(text: str) -> list[tuple[int, int, str, str]]:
        if pattern is None:
            return []
        found = []
        for match in pattern.finditer(text):
            entity = entities.get(ids.get(match.group(0).lower(), ""))
            if entity is not None:
                found.append((match.start(), match.end(), str(entity["name"]), str(entity["entity_type"])))
        return found

    return find


CONTEXT_WEIGHT = 0.3
PRONOUN_START = re.compile(r"^\W*(?:he|she|they)\b", re.IGNORECASE)


def _context_terms(env: ToolEnv, position: int, window: int = 2) -> set[str]:
    """Terms of a sentence, its neighbours in the same section and the section heading."""
    rows = env.store.source.sentence_rows
    section_id = rows[position]["section_id"]
    lo, hi = max(0, position - window), min(len(rows), position + window + 1)
    texts = [row["text"] for row in rows[lo:hi] if row["section_id"] == section_id]
    heading, _ = env.store.section_heading(section_id)
    return content_words(" ".join([*texts, heading or ""]))


def _actor(env: ToolEnv, position: int, find: EntityFinder | None) -> str | None:
    """The character a sentence-initial pronoun stands for: the last one named before it in the scene."""
    rows = env.store.source.sentence_rows
    if find is None or not PRONOUN_START.match(str(rows[position]["text"])):
        return None
    section_id = rows[position]["section_id"]
    for back in range(position - 1, max(-1, position - 6), -1):
        row = rows[back]
        if row["section_id"] != section_id:
            break
        characters = [f for f in find(str(row["text"])) if f[3] == "character"]
        if characters:
            return min(characters)[2]
    return None


def _neighbour(rows: list[dict], position: int, step: int) -> str | None:
    """The text of the sentence `step` away when it is in the same section."""
    other = position + step
    if not 0 <= other < len(rows):
        return None
    if rows[other]["section_id"] != rows[position]["section_id"]:
        return None
    return str(rows[other]["text"])


def short_candidates(
    env: ToolEnv, question: str, ranked: list[tuple[int, float]], find: EntityFinder | None
) -> list[Candidate]:
    """The best sentences for a short answer: answer score plus how much of the question their scene
    context (neighbours and heading) covers, best first."""
    rows = env.store.source.sentence_rows
    keys = content_words(question)
    pool = []
    for position, score in ranked[: 4 * SHORT_CANDIDATES]:
        context = len(keys & _context_terms(env, position)) / len(keys) if keys else 0.0
        pool.append((position, score + CONTEXT_WEIGHT * context))
    pool.sort(key=lambda item: (-item[1], item[0]))
    found = []
    for position, score in pool[:SHORT_CANDIDATES]:
        row = rows[position]
        section = env.store.sections_by_id.get(row["section_id"], {})
        text = lambda value: value if isinstance(value, str) and value.strip() else None  # noqa: E731
        found.append(
            Candidate(
                str(row["text"]),
                row["section_id"],
                float(score),
                text(row.get("speaker")),
                text(section.get("location")),
                text(section.get("time_of_day")),
                _actor(env, position, find),
                _neighbour(rows, position, -1),
                _neighbour(rows, position, 1),
                " ".join(str(row["text"]).split()) == " ".join(str(section.get("heading") or "").split()),
            )
        )
    return found


def graph_who(env: ToolEnv, intents: QueryIntents) -> tuple[str, Candidate | None] | None:
    """For a who-question naming things (not characters): in the scenes that mention every one of them,
    the character named last before each mention of them, by vote (None when no scene has them all,
    or two characters tie)."""
    entities = env.store.entities_by_id
    named = [e for e in intents.entity_ids if e in entities and entities[e]["entity_type"] != "character"]
    mentions = env.store.table("mentions")
    if not named or mentions.empty:
        return None
    scenes = {section_id for section_id, ids in env.store.entities_of_section.items() if set(named) <= ids}
    counts: dict[str, int] = {}
    where: dict[
        str, tuple[str, int]
    ] = {}  # the first scene and position where each character acted on the thing
    for _, scene in mentions[mentions["section_id"].isin(scenes)].groupby("section_id"):
        scene = scene.sort_values("char_start")
        actors = [
            (int(r.char_start), r.entity_id)
            for r in scene.itertuples()
            if entities.get(r.entity_id, {}).get("entity_type") == "character"
            and r.entity_id not in intents.entity_ids
        ]
        for thing in scene[scene["entity_id"].isin(named)].itertuples():
            before = [entity_id for start, entity_id in actors if start < int(thing.char_start)]
            if before:  # the character named last before the thing: who is acting on it
                counts[before[-1]] = counts.get(before[-1], 0) + 1
                where.setdefault(before[-1], (str(thing.section_id), int(thing.char_start)))
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return None
    section_id, start = where[ranked[0][0]]
    sentences = env.store.source.sentences
    hit = sentences[
        (sentences["section_id"] == section_id)
        & (sentences["char_start"] <= start)
        & (sentences["char_end"] > start)
    ]
    support = Candidate(str(hit.iloc[0]["text"]), section_id, 0.0) if len(hit) else None
    return str(entities[ranked[0][0]]["name"]), support


def short_answer_candidates(
    env: ToolEnv, question: str, intents: QueryIntents, board: EvidenceBoard, limit: int
) -> list[str]:
    """Up to `limit` distinct short answers, the offline finalizer's own first: each next one cut from
    the sentences left when the one before's sentence is set aside (for the LLM reader to choose from)."""
    ranked = rank_sentences(env, question, intents, board)
    find = entity_finder(env.store)
    hint = graph_who(env, intents) if intents.form.wh == "who" else None
    pool = short_candidates(env, question, ranked, find)
    found: list[str] = []
    while pool and len(found) < limit:
        short = short_answer(question, intents.form, pool, find, hint)
        if short is None:
            break
        if short.text.strip() and short.text.strip() not in found:
            found.append(short.text.strip())
        rest = [c for c in pool if c.text != short.quote]
        if len(rest) == len(pool):  # the answer's sentence was not among the candidates (a graph hint)
            rest = pool[1:]
        pool, hint = rest, None
    return found


def offline_finalizer(
    env: ToolEnv,
    question: str,
    options: list[str] | None,
    intents: QueryIntents,
    board: EvidenceBoard,
    skills: list[str],
) -> FinalAnswer:
    ranked = rank_sentences(env, question, intents, board)
    sentences = env.store.source.sentences
    rows = env.store.source.sentence_rows
    quotes = [(rows[p]["section_id"], rows[p]["text"]) for p, _ in ranked[:2]]
    notes = ["offline: extractive answer from the evidence board (no LLM)"]
    if not options:
        find = entity_finder(env.store)
        hint = graph_who(env, intents) if intents.form.wh == "who" else None
        short = short_answer(
            question, intents.form, short_candidates(env, question, ranked, find), find, hint
        )
        if short is None:
            return FinalAnswer("No answer found in the assembled evidence.", quotes=quotes, notes=notes)
        quotes = [(short.section_id, short.quote)] + [q for q in quotes if q[1] != short.quote][:1]
        notes.append(short.note())
        return FinalAnswer(
            short.text, quotes=quotes, notes=notes, kind=short.kind if short.typed else "sentence"
        )
    records = score_options(
        question,
        options,
        sentences,
        env.store.source.sentence_vectors,
        sentence_terms(env.store),
        env.embed_texts,
    )
    chosen, note = choose(records, exception=asks_for_exception(question))
    notes.append(note)
    for record in records:
        notes.append(
            f"option {chr(65 + record.option_index)}: {record.verdict} (score {record.score:.2f}; "
            f"own terms {record.lexical:.2f}, similarity {record.dense:+.2f} sd) {record.reason}"
        )
        for position in record.evidence[:1]:
            row = sentences.iloc[position]
            heading, ordinal = env.store.section_heading(row["section_id"])
            words = str(row["text"]).split()
            notes.append(
                f"    evidence [{ordinal}] {heading}: "
                f"“{' '.join(words[:30])}{' …' if len(words) > 30 else ''}”"
            )
    best = records[chosen].evidence[:1]
    quotes = [(sentences.iloc[p]["section_id"], sentences.iloc[p]["text"]) for p in best] + quotes[:1]
    verdicts = records
    return FinalAnswer(
        options[chosen], chosen, [round(v.score, 4) for v in verdicts], quotes, notes, kind="option"
    )
