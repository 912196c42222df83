"""summary_search: quotes from the summary hierarchy for a whole-story question, in story order.

- The plot / whole work: the work summary's quotes, first by rank, until the asked length.
- A character, a relationship, the setting or a theme: the document's sentences scored by how well
  they and their neighbourhood answer the question (dense and BM25 similarity, smoothed over the
  neighbouring sentences, so a passage about the subject counts more than one stray match), how much
  each is worth quoting (`sentence_salience`: centrality, named entities, narrative), whether it
  names an entity of the question and, for a character or a relationship, whether the report of the
  community holding that entity quotes it; taken best first until the asked length and read in
  story order.

Every row is one source sentence with its section, chunk and span.
"""

from __future__ import annotations

import numpy as np

from tasks.query.tools.env import ToolEnv
from tasks.query.tools.graph import find_entities_in_text
from tasks.query.tools.types import ToolRow, provenance
from tasks.text import count_words

# Weights of the focused selection (measured on SQuALITY train aspect questions, docs/squality.md).
LEXICAL_WEIGHT = 0.5
REGION_RADIUS = 3
REGION_WEIGHT = 2.0
SALIENCE_WEIGHT = 0.2
ENTITY_WEIGHT = 0.5
COMMUNITY_WEIGHT = 0.3
# Questions about people: the report of their community says who they are with and what happens to them.
PEOPLE_KINDS = ("character", "relationship")


def _take(order: list[int], words: np.ndarray, budget: int) -> list[int]:
    """The first positions of `order` whose words reach `budget`."""
    taken, total = [], 0
    for position in order:
        if total >= budget:
            break
        taken.append(position)
        total += int(words[position])
    return taken


def sentence_words(env: ToolEnv) -> np.ndarray:
    source = env.store.source
    return np.array([max(count_words(t, source.language), 1) for t in source.sentences["text"]])


def work_positions(env: ToolEnv, words: int) -> list[int]:
    """Sentence positions of the work summary's first quotes by rank (empty without one)."""
    store = env.store
    work = store.summaries_of("work")
    if work.empty:
        return []
    quotes = store.summary_quotes_of.get(str(work.iloc[0]["summary_id"]))
    if quotes is None:
        return []
    position = {s: p for p, s in enumerate(store.source.sentences["sentence_id"])}
    ranked = [position[s] for s in quotes["sentence_id"] if s in position]
    return _take(ranked, sentence_words(env), words)


def community_quoted(env: ToolEnv, entity_ids: list[str]) -> set[str]:
    """Sentence ids quoted by the reports of the communities holding any of `entity_ids`."""
    store = env.store
    communities = store.table("communities")
    wanted = set(entity_ids)
    held = {
        str(c)
        for c, members in zip(communities["community_id"], communities["member_ids"])
        if wanted & set(members)
    }
    reports = store.summaries_of("community")
    found: set[str] = set()
    for summary_id in reports.loc[reports["subject_id"].isin(held), "summary_id"]:
        quotes = store.summary_quotes_of.get(str(summary_id))
        if quotes is not None:
            found.update(quotes["sentence_id"].astype(str))
    return found


def focused_scores(env: ToolEnv, query: str, entity_ids: list[str], people: bool = False) -> np.ndarray:
    """Each sentence's score for a question about one subject of the story (see the module doc);
    `people`: a character or relationship question."""
    source = env.store.source
    n = len(source.sentences)
    lexical = source.sentence_bm25.scores(query)
    top = float(lexical.max()) if n else 0.0
    relevance = LEXICAL_WEIGHT * (lexical / top if top > 0 else lexical)
    vector = env.vector(query)
    if vector is not None and source.sentence_vectors.shape[1] == vector.shape[-1]:
        relevance = relevance + source.sentence_vectors @ vector
    width = 2 * REGION_RADIUS + 1
    region = np.convolve(relevance, np.ones(width) / width, mode="same") if n else relevance
    salience = env.store.sentence_salience["salience"].to_numpy(dtype=float)
    spread = float(salience.std()) if n else 0.0
    standard = (salience - salience.mean()) / spread if spread > 0 else np.zeros(n)
    named = np.zeros(n)
    mentions = env.store.table("mentions")
    if entity_ids and not mentions.empty:
        starts = source.sentences["char_start"].to_numpy()
        grounded = mentions[mentions["entity_id"].isin(entity_ids)]["char_start"].to_numpy()
        where = np.searchsorted(starts, grounded, side="right") - 1
        named[where[(where >= 0) & (where < n)]] = 1.0
    reported = np.zeros(n)
    if people and entity_ids:
        quoted = community_quoted(env, entity_ids)
        reported = source.sentences["sentence_id"].astype(str).isin(quoted).to_numpy(dtype=float)
    score = relevance + REGION_WEIGHT * region + SALIENCE_WEIGHT * standard + ENTITY_WEIGHT * named
    return score + COMMUNITY_WEIGHT * reported


def focused_positions(env: ToolEnv, query: str, kind: str, words: int) -> tuple[list[int], np.ndarray]:
    """Sentence positions chosen for a focused whole-story question, best first, and the scores."""
    entity_ids = find_entities_in_text(env, query) if env.store.has_graph else []
    scores = focused_scores(env, query, entity_ids, people=kind in PEOPLE_KINDS)
    quotable = ~env.store.sentence_salience["is_front_matter"].to_numpy(dtype=bool)
    candidates = np.flatnonzero(quotable)
    order = candidates[np.lexsort((candidates, -scores[candidates]))].tolist()
    return _take(order, sentence_words(env), words), scores


def summary_search(env: ToolEnv, query: str, kind: str = "work", words: int = 200) -> list[ToolRow]:
    """Quotes of the summary hierarchy answering a whole-story question (plot: the work summary;
    a character, relationship, setting or theme: sentences about it), in story order."""
    positions = work_positions(env, words) if kind == "work" else []
    level = "work"
    scores = None
    if not positions:  # a focused question, or a document built before the hierarchy existed
        positions, scores = focused_positions(env, query, kind, words)
        level = "sentences"
    rank = {p: r for r, p in enumerate(positions, start=1)}
    source = env.store.source
    rows = []
    for position in sorted(positions):
        sentence = source.sentence_rows[position]
        rows.append(
            ToolRow(
                "quote",
                str(sentence["sentence_id"]),
                str(sentence["text"]),
                round(float(scores[position]) if scores is not None else 1.0 / rank[position], 6),
                "narrative",
                env.store.doc_id,
                **provenance(
                    env.store,
                    [sentence["chunk_id"]],
                    sentence["section_id"],
                    (int(sentence["char_start"]), int(sentence["char_end"])),
                ),
                extra={"rank": rank[position], "level": level},
            )
        )
    return rows
