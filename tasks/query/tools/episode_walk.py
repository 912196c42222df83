"""Episode walks: anchor each event a question describes to an episode, then walk the cleaned
episode DAG to the episode the question asks for.

A progression question ("what sets off X, Y and Z?") asks for the episode that precedes the
described ones; an order question ("what happens just before X?") for the episode or scene next to
X's; a cause question for what leads into X. Passage retrieval over the whole question reaches one or
two of the described places and never the one asked for, whose words the question does not use.
Anchors come from the episode index (titles and summaries of the episode's events) and the event
index; the walk follows kept DAG edges, falling back on story order where an episode has none.
A progression question's described events are told near one another: each also takes its best
episodes on the stretch of the story around the whole question's best scenes (`chain_picks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tasks.query.question_clauses import read_shape
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow, provenance
from tasks.tables.io import as_list

UNIT_KINDS = ("event", "interaction")
MAX_ANCHORS = 4
CANDIDATES = 3  # episodes a clause proposes from each index (episodes, events, passages)
MAX_WALKED = 2
NEXT_DOOR_FROM = 2  # an order question's best-matching scenes whose scene next door is walked to
# An order question's X ("just before Bruce seeks a break at Bobby's cart") is often told in more than
# one scene, and the anchor takes one of them: the next door of the clause's best few scenes as well.
X_PLACES = 3
# A progression question's described events lie near one another and near the answer (in the corpus's
# questions, 63 % of the described scenes within 10 scenes of the answer's): each clause also takes
# its best episodes on the stretch of the story around the whole question's best scenes.
CHAIN_CENTRES = 3  # the whole question's best scenes the stretch is centred on
CHAIN_REACH = 15  # scenes either side of a centre
CHAIN_PICKS = 4  # episodes each described clause takes on the stretch
# The whole question's best scenes are left to the text channel, which reaches them anyway: a pick
# there would spend a row on a scene the evidence already has.
CHAIN_LEFT_TO_TEXT = 10
# Every row a walk can give: one per anchor, the anchor's own next scene, the next door of the whole
# question's best scenes and of X's best places, the episodes reached, each clause's picks on the stretch.
WALK_ROWS = MAX_ANCHORS + 1 + NEXT_DOOR_FROM + X_PLACES + MAX_WALKED + MAX_ANCHORS * CHAIN_PICKS
PROXIMITY = 0.5  # how much a nearer predecessor is preferred over a better-matching distant one


@dataclass(frozen=True)
class Anchor:
    """One described event, placed: its episode, the chunk that tells it, and how well it matched."""

    clause: str
    episode_id: str
    chunk_id: str
    score: float


def passage_scores(env: ToolEnv, text: str, vector: np.ndarray | None) -> dict[str, float]:
    """Each chunk's match to `text`: BM25 normalised to [0, 1], blended with the best sentence's
    cosine when vectors are there (the same reading as the hybrid text channel's)."""
    source = env.store.source
    lexical = source.chunk_bm25.scores(text)
    top = float(lexical.max()) if lexical.size else 0.0
    scores = lexical / top if top > 0 else lexical
    if vector is not None and source.sentence_vectors.shape[1] == vector.shape[-1]:
        order, starts, chunks = source.sentence_groups
        if len(order):
            similarity = np.einsum("ij,j->i", source.sentence_vectors, vector.reshape(-1))
            dense = np.zeros_like(scores)
            dense[chunks] = np.maximum.reduceat(similarity[order], starts)
            scores = 0.5 * scores + 0.5 * np.clip(dense, 0, None)
    return {chunk_id: float(scores[p]) for chunk_id, p in env.store.chunk_position.items() if p < len(scores)}


def episode_chunk_ids(env: ToolEnv, episode: dict[str, Any]) -> list[str]:
    """Every chunk of the scenes an episode spans, in story order."""
    of_section = env.store.source.chunk_ids_of_section
    return [c for s in as_list(episode["section_ids"]) for c in of_section.get(s, [])]


def _best_chunk(chunk_ids: list[str], scores: dict[str, float]) -> str | None:
    return max(chunk_ids, key=lambda c: (scores.get(c, 0.0), -chunk_ids.index(c)), default=None)


def _episodes_of_section(env: ToolEnv) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for episode_id, episode in env.store.episodes_by_id.items():
        for section_id in as_list(episode["section_ids"]):
            found.setdefault(section_id, []).append(episode_id)
    return found


def anchor_clause(env: ToolEnv, clause: str, chunk_scores: dict[str, float] | None = None) -> Anchor | None:
    """The episode that best tells `clause` (its own text, one of its events', or one of its
    passages'), and its chunk. Candidates come from all three; each is scored by its own match
    plus its best passage's, so an episode whose summary missed the clause still wins by its text."""
    vector = env.vector(clause)
    episodes = env.store.episodes_by_id
    own: dict[str, float] = {}
    index = env.store.asset("episode")
    if index is not None and len(index):
        own = dict(zip(index.ids, (float(v) for v in index.scores(clause, vector))))
    candidates = set(sorted(own, key=lambda e: (-own[e], e))[:CANDIDATES])
    for kind in UNIT_KINDS:
        units = env.store.asset(kind)
        if units is None or not len(units):
            continue
        for unit_id, score in units.search(clause, vector, CANDIDATES):
            episode_id = env.store.episode_of_unit.get(unit_id)
            if episode_id:
                candidates.add(episode_id)
                own[episode_id] = max(own.get(episode_id, 0.0), score)
    if chunk_scores is None:
        chunk_scores = passage_scores(env, clause, vector)
    of_section = _episodes_of_section(env)
    for chunk_id in sorted(chunk_scores, key=lambda c: (-chunk_scores[c], c))[:CANDIDATES]:
        candidates.update(of_section.get(env.store.chunks_by_id[chunk_id]["section_id"], []))
    candidates = {e for e in candidates if e in episodes}
    if not candidates:
        return None

    def fit(episode_id: str) -> float:
        chunk_ids = episode_chunk_ids(env, episodes[episode_id])
        return own.get(episode_id, 0.0) + max((chunk_scores.get(c, 0.0) for c in chunk_ids), default=0.0)

    best = max(sorted(candidates), key=fit)
    chunk_id = _best_chunk(episode_chunk_ids(env, episodes[best]), chunk_scores)
    return Anchor(clause, best, chunk_id, round(fit(best), 6)) if chunk_id else None


def _story_neighbour(env: ToolEnv, episode_id: str, step: int) -> str | None:
    """The episode just before (step -1) or after (+1) in story order."""
    ordered = sorted(env.store.episodes_by_id.values(), key=lambda e: (e["first_ordinal"], e["episode_id"]))
    ids = [e["episode_id"] for e in ordered]
    if episode_id not in ids:
        return None
    place = ids.index(episode_id) + step
    return ids[place] if 0 <= place < len(ids) else None


def walk(
    env: ToolEnv, anchor: Anchor, direction: str, question_scores: dict[str, float], nearest: bool = False
) -> list[str]:
    """Episodes reached from the anchor along kept DAG edges (predecessors for 'before', successors
    for 'after'): nearest first when `nearest` (what happens just before), else the best match to
    the question with nearness as a tie-breaker (what set it off); story order when the DAG has no
    edge there."""
    dag = env.store.episode_dag
    episodes = env.store.episodes_by_id
    here = episodes[anchor.episode_id]
    if anchor.episode_id in dag:
        neighbours = list(
            dag.predecessors(anchor.episode_id)
            if direction == "before"
            else dag.successors(anchor.episode_id)
        )
    else:
        neighbours = []
    neighbours = [n for n in neighbours if n in episodes]
    if not neighbours:
        fallback = _story_neighbour(env, anchor.episode_id, -1 if direction == "before" else 1)
        return [fallback] if fallback else []

    def rank(episode_id: str) -> float:
        other = episodes[episode_id]
        gap = abs(
            int(here["first_ordinal"])
            - int(other["last_ordinal"] if direction == "before" else other["first_ordinal"])
        )
        if nearest:
            return -float(gap)
        best = max((question_scores.get(c, 0.0) for c in episode_chunk_ids(env, other)), default=0.0)
        return best + PROXIMITY / (1 + gap)

    return sorted(neighbours, key=lambda e: (-rank(e), e))[:MAX_WALKED]


def earlier_matches(env: ToolEnv, anchor: Anchor, asked_scores: dict[str, float]) -> list[tuple[str, str]]:
    """(episode, chunk) of the episodes told before the anchor's that best match what the question
    asks ("by the time X, what has already happened in the studio?"): anywhere earlier, not next door,
    so the whole story before X is searched and the nearer scenes get no preference."""
    episodes = env.store.episodes_by_id
    first = int(episodes[anchor.episode_id]["first_ordinal"])
    found: list[tuple[float, str, str]] = []
    for episode_id, episode in episodes.items():
        if int(episode["last_ordinal"]) >= first:
            continue
        chunk_id = _best_chunk(episode_chunk_ids(env, episode), asked_scores)
        if chunk_id:
            found.append((asked_scores.get(chunk_id, 0.0), episode_id, chunk_id))
    found.sort(key=lambda t: (-t[0], t[1]))
    return [(episode_id, chunk_id) for _, episode_id, chunk_id in found[:MAX_WALKED]]


def _asked_part(query: str, clauses: list[str]) -> str:
    """The question without the events it describes: what it asks about."""
    for clause in clauses:
        query = query.replace(clause, " ")
    return " ".join(query.split())


def _scene_within(env: ToolEnv, anchor: Anchor, direction: str) -> str | None:
    """The chunk of the scene before (after) the anchor's scene inside the anchor's own episode
    (the one nearest the anchor), or None when the anchor's scene opens (closes) the episode."""
    sections = as_list(env.store.episodes_by_id[anchor.episode_id]["section_ids"])
    section_id = env.store.chunks_by_id[anchor.chunk_id]["section_id"]
    if section_id not in sections:
        return None
    place = sections.index(section_id) + (-1 if direction == "before" else 1)
    if not 0 <= place < len(sections):
        return None
    chunk_ids = env.store.source.chunk_ids_of_section.get(sections[place]) or []
    return (chunk_ids[-1] if direction == "before" else chunk_ids[0]) if chunk_ids else None


def _scene_next_door(env: ToolEnv, chunk_id: str, direction: str) -> tuple[str, str] | None:
    """(episode, its chunk nearest the chunk) of the episode in the scene just before (after) the
    chunk's scene, in story order: "just before X" is most often told in the scene before X's."""
    ordinal = env.store.section_heading(env.store.chunks_by_id[chunk_id]["section_id"])[1]
    if ordinal is None:
        return None
    episodes = env.store.episodes_by_id.values()
    if direction == "before":
        earlier = [e for e in episodes if int(e["last_ordinal"]) < ordinal]
        chosen = max(earlier, key=lambda e: (int(e["last_ordinal"]), e["episode_id"]), default=None)
    else:
        later = [e for e in episodes if int(e["first_ordinal"]) > ordinal]
        chosen = min(later, key=lambda e: (int(e["first_ordinal"]), e["episode_id"]), default=None)
    chunk_ids = episode_chunk_ids(env, chosen) if chosen is not None else []
    if not chunk_ids:
        return None
    return chosen["episode_id"], chunk_ids[-1] if direction == "before" else chunk_ids[0]


def _best_scenes(env: ToolEnv, scores: dict[str, float], count: int) -> list[str]:
    """The best-scoring chunk of each of the `count` best-scoring scenes."""
    found: dict[str, str] = {}
    for chunk_id in sorted(scores, key=lambda c: (-scores[c], c)):
        found.setdefault(env.store.chunks_by_id[chunk_id]["section_id"], chunk_id)
        if len(found) == count:
            break
    return list(found.values())


def _row(env: ToolEnv, episode_id: str, chunk_id: str, score: float, role: str, clause: str = "") -> ToolRow:
    episode = env.store.episodes_by_id[episode_id]
    return ToolRow(
        "episode",
        episode_id,
        f"{episode['title']}: {episode['summary']}",
        round(float(score), 6),
        "narrative",
        env.store.doc_id,
        **provenance(env.store, [chunk_id]),
        entity_ids=tuple(as_list(episode["participant_ids"])),
        extra={
            "walk": role,
            "clause": clause,
            "first_ordinal": int(episode["first_ordinal"]),
            "last_ordinal": int(episode["last_ordinal"]),
        },
    )


def episode_walk_search(
    env: ToolEnv,
    query: str,
    clauses: list[str] | None = None,
    direction: str | None = None,
    top_k: int = WALK_ROWS,
) -> list[ToolRow]:
    """Anchor each event the question describes to an episode, then walk the cleaned episode DAG
    to the episode before or after them; one row per anchor and per episode reached."""
    if not env.hierarchy or not env.store.episodes_by_id:
        return []
    shape = read_shape(query)
    direction = direction or shape.direction
    described = list(clauses or shape.clauses or (query,))[:MAX_ANCHORS]
    # Each clause's passage scores serve its anchor and, for a progression question, its chain picks.
    clause_scores = {c: passage_scores(env, c, env.vector(c)) for c in described}
    anchors = [a for a in (anchor_clause(env, c, clause_scores[c]) for c in described) if a is not None]
    rows: list[ToolRow] = []
    seen: set[str] = set()
    for anchor in anchors:
        if anchor.chunk_id not in seen:
            seen.add(anchor.chunk_id)
            rows.append(_row(env, anchor.episode_id, anchor.chunk_id, anchor.score, "anchor", anchor.clause))
    if direction in ("before", "after") and anchors:
        episodes = env.store.episodes_by_id
        # From the earliest described event when looking back, the latest when looking ahead.
        pick = min if direction == "before" else max
        start = pick(anchors, key=lambda a: (int(episodes[a.episode_id]["first_ordinal"]), a.clause))
        if shape.far and direction == "before":  # anything earlier, by what is asked: no next door
            asked = _asked_part(query, described)
            asked_scores = passage_scores(env, asked, env.vector(asked))
            for episode_id, chunk_id in earlier_matches(env, start, asked_scores):
                if chunk_id not in seen:
                    seen.add(chunk_id)
                    rows.append(_row(env, episode_id, chunk_id, start.score / 2, direction))
            return rows[:top_k]
        # The anchor's episode itself goes on in the next (or began in the previous) scene; else,
        # for an order question, the episode of the scene next door.
        inside = _scene_within(env, start, direction)
        neighbour = (start.episode_id, inside) if inside else None
        if neighbour is None and shape.kind == "order":
            neighbour = _scene_next_door(env, start.chunk_id, direction)
        if neighbour is not None and neighbour[1] not in seen:
            seen.add(neighbour[1])
            rows.append(_row(env, neighbour[0], neighbour[1], start.score / 2, direction))
        question_scores = passage_scores(env, query, env.vector(query))
        if shape.kind in ("order", "progression") and question_scores:
            # The whole question's best passage often tells X (or one of the described events) where
            # the clauses' anchors miss it (X happens twice, or the words are elsewhere): what came
            # just before (after) is told in its scene next door as well. For an order question X's
            # scene is often only the second best: the next door of both best scenes (on the corpus,
            # 6 questions gained, 1 lost). A progression question's second best: 4 gained, 5 lost.
            count = NEXT_DOOR_FROM if shape.kind == "order" else 1
            places = _best_scenes(env, question_scores, count)
            if shape.kind == "order":
                places += _best_scenes(env, clause_scores[described[0]], X_PLACES)
            for best in places:
                beside = _scene_next_door(env, best, direction)
                if beside is not None and beside[1] not in seen:
                    seen.add(beside[1])
                    rows.append(_row(env, beside[0], beside[1], start.score / 2, direction))
        for episode_id in walk(env, start, direction, question_scores, nearest=shape.kind == "order"):
            chunk_ids = episode_chunk_ids(env, episodes[episode_id])
            # The scene nearest the anchor tells what leads into it (or follows from it).
            chunk_id = chunk_ids[-1 if direction == "before" else 0] if chunk_ids else None
            if chunk_id and chunk_id not in seen:
                seen.add(chunk_id)
                rows.append(_row(env, episode_id, chunk_id, start.score / 2, direction))
        if shape.kind == "progression" and question_scores:
            for episode_id, chunk_id, clause in chain_picks(env, clause_scores, question_scores, seen):
                seen.add(chunk_id)
                rows.append(_row(env, episode_id, chunk_id, start.score / 2, "chain", clause))
    return rows[:top_k]


def chain_picks(
    env: ToolEnv,
    clause_scores: dict[str, dict[str, float]],
    question_scores: dict[str, float],
    seen: set[str],
) -> list[tuple[str, str, str]]:
    """(episode, chunk, clause): for each described clause, the episodes that tell it best on the
    stretch of the story around the whole question's best scenes, skipping scenes already taken and
    the question's own best ones. A clause searched over the whole film finds its place for few
    clauses (the anchors); on the stretch where the question's events are told, its best few
    episodes hold the described scenes the anchors and the text channel miss."""
    # One ranking of the question's best scenes: its first few centre the stretch, all are left to text.
    best = _best_scenes(env, question_scores, max(CHAIN_CENTRES, CHAIN_LEFT_TO_TEXT))
    centres = [
        env.store.section_heading(env.store.chunks_by_id[c]["section_id"])[1] for c in best[:CHAIN_CENTRES]
    ]
    centres = [c for c in centres if c is not None]
    near = [
        e
        for e in env.store.episodes_by_id.values()
        if any(abs(int(e["first_ordinal"]) - c) <= CHAIN_REACH for c in centres)
    ]
    taken = {env.store.chunks_by_id[c]["section_id"] for c in seen}
    taken |= {env.store.chunks_by_id[c]["section_id"] for c in best[:CHAIN_LEFT_TO_TEXT]}
    picks: list[tuple[str, str, str]] = []
    for clause, scores in clause_scores.items():
        ranked: list[tuple[float, str, str]] = []
        for episode in near:
            chunk_id = _best_chunk(episode_chunk_ids(env, episode), scores)
            if chunk_id:
                ranked.append((scores.get(chunk_id, 0.0), episode["episode_id"], chunk_id))
        ranked.sort(key=lambda t: (-t[0], t[1]))
        count = 0
        for _, episode_id, chunk_id in ranked:
            section_id = env.store.chunks_by_id[chunk_id]["section_id"]
            if section_id in taken:
                continue
            taken.add(section_id)
            picks.append((episode_id, chunk_id, clause))
            count += 1
            if count == CHAIN_PICKS:
                break
    return picks
