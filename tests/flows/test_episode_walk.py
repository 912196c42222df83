"""Episode walks on the bundled screenplay: each described event is anchored to an episode and a
chunk of its scenes, the walk reaches the episode before (or after) it along the cleaned DAG, and
the places it reaches get passages in the final evidence."""

from __future__ import annotations

import pytest

from schemas.config import load_settings
from tasks.query.answer_nkw import answer_nkw
from tasks.query.tools.env import ToolEnv
import tasks.query.tools.episode_walk as episode_walk
from tasks.query.tools.episode_walk import episode_chunk_ids, episode_walk_search, passage_scores
from tasks.query.tools.registry import call_tool

BEFORE = "What happens just before Ellis locks the brass key in his desk drawer?"
PROGRESSION = (
    "What pivotal event sets off the chain of actions leading to Nia climbing the lighthouse stairwell "
    "with Tom, and the Kittiwake crew being brought in from the storm?"
)


@pytest.fixture
def env(screenplay_env) -> ToolEnv:
    return screenplay_env


def _ordinal(env: ToolEnv, chunk_id: str) -> int:
    return env.store.section_heading(env.store.chunks_by_id[chunk_id]["section_id"])[1]


def test_an_order_question_is_anchored_where_its_event_happens_and_walks_back(env):
    rows = episode_walk_search(env, BEFORE)
    anchors = [r for r in rows if r.extra["walk"] == "anchor"]
    walked = [r for r in rows if r.extra["walk"] == "before"]
    assert anchors and walked
    drawer = [r for r in anchors if "drawer" in env.store.chunks_by_id[r.chunk_id]["text"]]
    assert drawer, [r.text for r in anchors]
    for row in rows:  # every row is grounded in a chunk of the episode it names
        assert row.chunk_id in episode_chunk_ids(env, env.store.episodes_by_id[row.item_id])
    anchor_ordinal = _ordinal(env, drawer[0].chunk_id)
    assert any(_ordinal(env, r.chunk_id) < anchor_ordinal for r in walked)
    # A later place is only ever the scene before another place where X may be told.
    places = set()
    for text, count in (
        (BEFORE, episode_walk.NEXT_DOOR_FROM),
        (drawer[0].extra["clause"], episode_walk.X_PLACES),
    ):
        scores = passage_scores(env, text, env.vector(text))
        ranked = dict.fromkeys(_ordinal(env, c) for c in sorted(scores, key=lambda c: (-scores[c], c)))
        places |= set(list(ranked)[:count])
    for row in walked:
        assert _ordinal(env, row.chunk_id) < anchor_ordinal or _ordinal(env, row.chunk_id) + 1 in places


def test_a_progression_question_walks_to_an_episode_before_its_earliest_anchor(env):
    rows = episode_walk_search(env, PROGRESSION)
    anchors = [r for r in rows if r.extra["walk"] == "anchor"]
    walked = [r for r in rows if r.extra["walk"] == "before"]
    assert anchors and walked
    earliest = min(r.extra["first_ordinal"] for r in anchors)
    assert all(r.extra["first_ordinal"] <= earliest for r in walked)
    assert len({r.chunk_id for r in rows}) == len(rows)  # one row per place


def test_without_the_hierarchy_there_is_no_walk(env):
    flat = ToolEnv(env.store, env.embed_texts, hierarchy=False)
    assert episode_walk_search(flat, BEFORE) == []


def test_the_walk_is_a_traced_tool_with_validated_arguments(env):
    call = call_tool(
        env, "episode_walk_search", {"query": BEFORE, "clauses": ["Ellis locks the key away"]}, 1
    )
    assert call.error is None and call.rows
    refused = call_tool(env, "episode_walk_search", {"query": BEFORE, "direction": "sideways"}, 1)
    assert refused.error and not refused.rows


def test_the_places_the_walk_reaches_are_in_the_final_evidence(env):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    answer = answer_nkw(env, BEFORE, None, settings.answer, settings.retrieval)
    walk_calls = [c for c in answer.trace if c["tool"] == "episode_walk_search"]
    assert walk_calls and walk_calls[0]["round"] == 1
    walked = episode_walk_search(env, BEFORE)
    evidence_chunks = {e.chunk_id for e in answer.evidence}
    assert {r.chunk_id for r in walked} <= evidence_chunks


def test_the_budget_the_board_leaves_is_spent_on_text_ranked_places_after_the_walk(env):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    answer = answer_nkw(env, BEFORE, None, settings.answer, settings.retrieval)
    reference = call_tool(
        env, "hybrid_evidence_search", {"query": BEFORE, "top_k": settings.retrieval.top_k_chunks}, 0
    )
    budget = sum(int(r.extra["n_tokens"]) for r in reference.rows)
    spent = sum(e.n_tokens for e in answer.evidence)
    # Filled to within one excerpt of the budget, never over it; the walk's places are still there.
    assert budget - settings.answer.max_passage_tokens < spent <= budget
    assert {r.chunk_id for r in episode_walk_search(env, BEFORE)} <= {e.chunk_id for e in answer.evidence}
    spans = sorted((e.chunk_id, e.text) for e in answer.evidence)
    assert len(spans) == len(set(spans))  # no place is given twice


def test_a_by_the_time_question_searches_the_whole_story_before_its_event(env):
    question = (
        "By the time Ellis locks the brass key in his desk drawer, "
        "what has already taken place in the lamp room?"
    )
    rows = episode_walk_search(env, question)
    anchors = [r for r in rows if r.extra["walk"] == "anchor"]
    walked = [r for r in rows if r.extra["walk"] == "before"]
    assert len(anchors) == 1 and walked  # the asked part is not anchored as an event
    anchor_ordinal = _ordinal(env, anchors[0].chunk_id)
    assert all(_ordinal(env, r.chunk_id) < anchor_ordinal for r in walked)
    # The lamp room is the first scene, not the one next to the anchor's: the walk is not the nearest.
    assert anchor_ordinal > 2
    assert any("LAMP ROOM" in (r.heading or "") for r in walked), [r.heading for r in walked]


def test_an_order_question_also_walks_from_where_the_whole_question_points(env):
    # The clause is anchored elsewhere (as when X happens twice); the scene just before the one the
    # whole question's best passage tells is walked to as well.
    rows = episode_walk_search(env, BEFORE, clauses=["the Kittiwake crew being brought in from the storm"])
    anchor = next(r for r in rows if r.extra["walk"] == "anchor")
    scores = passage_scores(env, BEFORE, env.vector(BEFORE))
    told = _ordinal(env, max(sorted(scores), key=lambda c: scores[c]))
    assert told != _ordinal(env, anchor.chunk_id)  # not the anchor's own scene next door
    walked = {_ordinal(env, r.chunk_id) for r in rows if r.extra["walk"] == "before"}
    assert told - 1 in walked, (told, walked)


def test_an_order_question_walks_from_the_whole_question_s_two_best_scenes(env):
    # X's scene is often the text channel's second-best: both best scenes get their scene before.
    rows = episode_walk_search(env, BEFORE, clauses=["the Kittiwake crew being brought in from the storm"])
    scores = passage_scores(env, BEFORE, env.vector(BEFORE))
    told = []
    for chunk_id in sorted(scores, key=lambda c: (-scores[c], c)):
        if _ordinal(env, chunk_id) not in told:
            told.append(_ordinal(env, chunk_id))
    walked = {_ordinal(env, r.chunk_id) for r in rows if r.extra["walk"] == "before"}
    assert {told[0] - 1, told[1] - 1} <= walked, (told[:2], walked)


def test_an_order_question_walks_from_the_best_places_of_its_event(env):
    # X is told in more than one scene and the anchor takes one: the scene before each of the clause's
    # best few scenes is walked to, wherever the whole question points.
    clause = "the Kittiwake crew being brought in from the storm"
    rows = episode_walk_search(env, BEFORE, clauses=[clause])
    scores = passage_scores(env, clause, env.vector(clause))
    places = list(dict.fromkeys(_ordinal(env, c) for c in sorted(scores, key=lambda c: (-scores[c], c))))
    places = places[: episode_walk.X_PLACES]
    walked = {_ordinal(env, r.chunk_id) for r in rows if r.extra["walk"] == "before"}
    assert [p for p in places if p > 1], places
    assert {p - 1 for p in places if p > 1} <= walked, (places, walked)


def test_a_progression_question_also_walks_from_where_the_whole_question_points(env):
    rows = episode_walk_search(env, PROGRESSION, clauses=["Ellis locks the brass key in his desk drawer"])
    scores = passage_scores(env, PROGRESSION, env.vector(PROGRESSION))
    told = _ordinal(env, max(sorted(scores), key=lambda c: scores[c]))
    walked = {_ordinal(env, r.chunk_id) for r in rows if r.extra["walk"] == "before"}
    assert told - 1 in walked, (told, walked)


def test_each_described_event_of_a_progression_question_takes_its_best_scenes_near_the_question(
    env, monkeypatch
):
    # The bundled screenplay is a few scenes long: leave only the whole question's best scene to the
    # text channel and reach two scenes either side, so the stretch is narrower than the story.
    monkeypatch.setattr(episode_walk, "CHAIN_LEFT_TO_TEXT", 1)
    monkeypatch.setattr(episode_walk, "CHAIN_REACH", 2)
    monkeypatch.setattr(episode_walk, "CHAIN_PICKS", 2)
    rows = episode_walk_search(env, PROGRESSION)
    chain = [r for r in rows if r.extra["walk"] == "chain"]
    assert chain, [r.extra["walk"] for r in rows]
    scores = passage_scores(env, PROGRESSION, env.vector(PROGRESSION))
    ranked = sorted(scores, key=lambda c: (-scores[c], c))
    best = _ordinal(env, ranked[0])
    centres = list(dict.fromkeys(_ordinal(env, c) for c in ranked))[: episode_walk.CHAIN_CENTRES]
    others = [r for r in rows if r.extra["walk"] != "chain"]
    for row in chain:
        here = _ordinal(env, row.chunk_id)
        assert any(abs(here - c) <= 2 for c in centres), (here, centres)  # on the stretch
        assert here != best  # the question's best scene is left to the text channel
        assert here not in {_ordinal(env, r.chunk_id) for r in others}  # no scene taken twice
    for clause in {r.extra["clause"] for r in chain}:
        picked = [r for r in chain if r.extra["clause"] == clause]
        assert len(picked) <= 2
        # The clause's first pick is its best-matching scene of the stretch among those left.
        own = passage_scores(env, clause, env.vector(clause))
        first = _ordinal(env, picked[0].chunk_id)
        taken = {best} | {_ordinal(env, r.chunk_id) for r in others + chain if r is not picked[0]}
        rivals = [
            c
            for c in own
            if _ordinal(env, c) not in taken
            and any(abs(_ordinal(env, c) - centre) <= 2 for centre in centres)
        ]
        assert own[picked[0].chunk_id] >= max(own[c] for c in rivals if _ordinal(env, c) != first) - 1e-9
    assert len({r.chunk_id for r in rows}) == len(rows)


def test_only_a_progression_question_takes_the_chain_picks(env, monkeypatch):
    monkeypatch.setattr(episode_walk, "CHAIN_LEFT_TO_TEXT", 1)
    assert not [r for r in episode_walk_search(env, BEFORE) if r.extra["walk"] == "chain"]
