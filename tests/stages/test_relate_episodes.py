"""relate_episodes: bounded candidate pairs, offline labelling rules, LLM judgments."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from schemas.config import RelateEpisodesSettings, load_settings
from tasks.hierarchy import assemble_episodes
from tasks.hierarchy import relate_episodes
from tasks.hierarchy.episode_candidates import (
    Candidate,
    EpisodeInfo,
    candidate_pairs,
    entity_idf,
    propose_pairs,
)
from tasks.hierarchy.episode_records import episode_line
from tasks.hierarchy.relate_episodes import label_pair
from tasks.embeddings import HashingEmbedder
from tasks.hierarchy.units import entity_names
from tasks.tables.io import read_frame
from tasks.text import count_tokens
from tests.fixtures.hierarchy.llm import llm_client
from tests.fixtures.hierarchy.mini import context, contract_problems, tables
from tests.fixtures.stage_context import stage_context
from tests.fixtures.embedders import RecordingEmbedder


def info(
    eid: str,
    position: int,
    people: tuple[str, ...] = (),
    stakes: tuple[str, ...] = (),
    text: str = "",
    first: int | None = None,
    last: int | None = None,
) -> EpisodeInfo:
    first = position + 1 if first is None else first
    return EpisodeInfo(
        eid,
        position,
        first,
        first if last is None else last,
        frozenset(people + stakes),
        frozenset(people),
        frozenset(stakes),
        frozenset(text.lower().split()),
        text,
    )


def label(
    a: EpisodeInfo,
    b: EpisodeInfo,
    flashbacks: set[str] = frozenset(),
    hostile: set = frozenset(),
    lexical: float = 0.0,
) -> tuple | None:
    cand = Candidate(a.position, b.position, 0.5, (("lexical", lexical), ("order", 1.0)))
    return label_pair(a, b, cand, entity_idf([a, b, info("z", 9, ("other",))]), set(flashbacks), set(hostile))


def with_episodes(frames: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    out = assemble_episodes.run(context("assemble_episodes", frames))
    return {**frames, "episodes": pd.DataFrame(out["episodes"])}


# ---------------------------------------------------------------- candidates


def crowd(n: int) -> list[EpisodeInfo]:
    """n episodes sharing a protagonist, with rotating side characters and words."""
    return [
        info(f"e{i:04d}", i, ("hero", f"side{i % 17}"), text=f"hero meets side{i % 17} at place{i % 23}")
        for i in range(n)
    ]


def test_candidate_pairs_are_bounded_per_episode_and_keep_every_adjacent_pair() -> None:
    infos = crowd(300)
    vectors = np.eye(300, 32, dtype=np.float32)[:, :32] + 0.01
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    pairs = candidate_pairs(infos, {"hero": ["side1", "side2"]}, window=6, max_per_episode=5, vectors=vectors)
    load = pd.Series([p.a for p in pairs] + [p.b for p in pairs]).value_counts()
    assert load.max() <= 5 and len(pairs) <= 300 * 5 // 2
    assert {(i, i + 1) for i in range(299)} <= {(p.a, p.b) for p in pairs}
    assert all(p.a < p.b for p in pairs) and pairs == sorted(pairs, key=lambda p: (p.a, p.b))
    assert pairs == candidate_pairs(
        infos, {"hero": ["side1", "side2"]}, window=6, max_per_episode=5, vectors=vectors
    )


def test_proposals_grow_linearly_with_the_number_of_episodes() -> None:
    small, large = len(propose_pairs(crowd(400), {}, window=6)), len(propose_pairs(crowd(1600), {}, window=6))
    assert large <= 4.4 * small  # four times the episodes, about four times the pairs (never sixteen)


def test_every_signal_can_propose_a_pair_beyond_the_window() -> None:
    far = [
        info("a", 0, ("ann",), text="lantern"),
        *[info(f"f{i}", i, (f"x{i}",)) for i in range(1, 20)],
        info("b", 20, ("ann",), text="other"),
        info("c", 21, ("bob",), text="lantern storm"),
    ]
    proposed = propose_pairs(far, {"ann": ["bob"]}, window=2)
    assert "participants" in proposed[(0, 20)]
    assert "graph" in proposed[(0, 21)] and "lexical" in proposed[(0, 21)]
    assert proposed[(0, 1)] == {"order"}


# ---------------------------------------------------------------- offline labels


def test_causal_cue_with_shared_people_gives_causes() -> None:
    a, b = info("a", 0, ("ann",), ("key",)), info("b", 1, ("ann",), text="Because the key is gone, Ann runs.")
    kind, source, target, confidence, _ = label(a, b)
    assert (kind, source, target) == ("causes", "a", "b") and 0.5 <= confidence <= 0.95


def test_cue_words_inside_quoted_speech_are_not_narration() -> None:
    a = info("a", 0, ("ann",))
    said = info("b", 1, ("ann",), text="Ann tells Bob: “Because you lied, I left.”")
    assert label(a, said)[0] == "precedes"
    zh = info("c", 1, ("ann",), text="安说：“因为你撒谎。”")
    assert (
        label(a, zh)[0] == "precedes"
        and label(a, info("d", 1, ("ann",), text="因为下雨，安跑了。"))[0] == "causes"
    )


def test_goal_over_shared_stakes_gives_causes_and_an_explicit_cause_beats_contrast() -> None:
    a = info("a", 0, ("ann",), ("key",), text="Ann decides to keep the key.")
    b = info("b", 1, ("ann", "bob"), ("key",), text="Bob searches the tower.")
    assert label(a, b)[:3] == ("causes", "a", "b")
    rival = info("r", 1, ("bob",), ("key",), text="Bob searches the tower.")
    assert label(a, rival)[0] == "contrasts"  # different people after the same key
    caused = info("c", 1, ("bob",), ("key",), text="Because Ann kept the key, Bob searches the tower.")
    assert label(a, caused)[0] == "causes"


def test_flashback_is_a_backward_precedes_edge() -> None:
    a, b = info("a", 0, ("ann",)), info("b", 1, ("ann",), text="Years ago Ann met Bob.")
    assert label(a, b, flashbacks={"b"})[:3] == ("precedes", "b", "a")


def test_contrasts_need_different_people_and_a_shared_stake_or_hostility() -> None:
    a, b = info("a", 0, ("ann",), ("key",)), info("b", 1, ("bob",), ("key",))
    assert label(a, b)[:3] == ("contrasts", "a", "b")
    c, d = info("c", 0, ("ann",)), info("d", 1, ("bob",))
    assert label(c, d) is None
    assert label(c, d, hostile={frozenset(("ann", "bob"))})[0] == "contrasts"


def test_overlapping_or_repeated_material_elaborates_and_plain_continuation_precedes() -> None:
    a = info("a", 0, ("ann",), text="ann lantern storm", first=1, last=4)
    b = info("b", 1, ("ann",), text="ann lantern storm", first=3, last=5)
    assert label(a, b, lexical=0.5)[:3] == ("elaborates", "a", "b")
    c = info("c", 1, ("ann",), first=5)
    kind, _, _, confidence, _ = label(a, c, lexical=0.1)
    assert kind == "precedes" and 0.35 <= confidence <= 0.9


# ---------------------------------------------------------------- stage


def test_offline_stage_on_the_mini_story() -> None:
    frames = with_episodes(tables())
    links = relate_episodes.run(context("relate_episodes", frames))["episode_links"]
    ids = list(frames["episodes"]["episode_id"])
    assert [(l["source_episode_id"], l["target_episode_id"], l["relation_type"]) for l in links] == [
        (ids[0], ids[2], "precedes")
    ]
    assert links[0]["method"] == "heuristic" and "share participants" in links[0]["evidence"]
    assert contract_problems("episode_links", links, frames) == []
    strict = load_settings(overrides={"relate_episodes": {"min_confidence": 0.99}})
    assert relate_episodes.run(context("relate_episodes", frames, strict))["episode_links"] == []


def _asked(prompt: str) -> list[tuple[int, str, str]]:
    """(number, line of A, line of B) of each pair a relate_episodes request lists."""
    lines = dict(re.findall(r"^(E\d+) (\(.+)$", prompt, re.MULTILINE))
    pairs = re.findall(r"^(\d+)\. (E\d+) and (E\d+)$", prompt, re.MULTILINE)
    return [(int(n), lines[a], lines[b]) for n, a, b in pairs]


def _lines(frames: dict[str, pd.DataFrame]) -> list[str]:
    """Each episode's line as relate_episodes requests show it (summary, goal, participants)."""
    names = entity_names(frames["entities"])
    return [episode_line(r, names, "en") for r in frames["episodes"].itertuples()]


def _judgment(number: int, relation: str, direction: str, confidence: float, reason: str) -> dict:
    return {
        "number": number,
        "relation_type": relation,
        "direction": direction,
        "confidence": confidence,
        "reason": reason,
    }


def test_llm_judges_several_pairs_per_request_with_direction_and_failures() -> None:
    frames = with_episodes(tables())
    titles = _lines(frames)

    def answer(prompt: str) -> object:
        asked = _asked(prompt)
        if [(a, b) for _, a, b in asked] == [(titles[1], titles[2])]:
            return "not json at all"  # the pair left out below, asked again alone: a broken reply
        items = []
        for number, a, b in asked:
            if (a, b) == (titles[0], titles[1]):
                items.append(_judgment(number, "contrasts", "A_to_B", 0.7, "two stakes"))
            if (a, b) == (titles[0], titles[2]):
                items.append(_judgment(number, "causes", "B_to_A", 0.8, "the lamp"))
        return {"items": items}  # the pair (1, 2) is left out

    with llm_client(answer) as (client, server):
        out = relate_episodes.run(context("relate_episodes", frames, llm=client))
        prompts = [r.body["messages"][1]["content"] for r in server.chat_requests()]
    ids = list(frames["episodes"]["episode_id"])
    got = {
        (l["source_episode_id"], l["target_episode_id"], l["relation_type"], l["method"])
        for l in out["episode_links"]
    }
    assert got == {(ids[0], ids[1], "contrasts", "llm"), (ids[2], ids[0], "causes", "llm")}
    assert [f["item_id"] for f in out["failures"]] == [f"{ids[1]}|{ids[2]}"]
    first = prompts[0]
    assert len(_asked(first)) == 3  # every candidate pair in one request
    assert all(first.count(title) == 1 for title in titles)  # each episode described once
    assert all(len(line.split(" | ")[0].split()) <= 2 + 40 for line in titles)  # span + summary's start
    assert contract_problems("episode_links", out["episode_links"], frames) == []


def test_pairs_left_out_are_asked_again_down_to_one_and_a_pair_never_answered_is_a_failure() -> None:
    frames = with_episodes(tables())

    def first_only(prompt: str) -> object:
        return {"items": [_judgment(1, "precedes", "A_to_B", 0.9, "next")]}  # only the first pair

    with llm_client(first_only) as (client, _):
        out = relate_episodes.run(context("relate_episodes", frames, llm=client))
    assert len(out["episode_links"]) == 3 and out["failures"] == []  # asked in smaller groups: none lost

    def never_alone(prompt: str) -> object:
        alone = len(_asked(prompt)) == 1
        return {"items": [] if alone else [_judgment(1, "precedes", "A_to_B", 0.9, "next")]}

    with llm_client(never_alone) as (client, _):
        out = relate_episodes.run(context("relate_episodes", frames, llm=client))
    assert len(out["episode_links"]) == 1  # the first of three; the other two asked alone, unanswered
    assert len(out["failures"]) == 2 and all(f["error"].startswith("llm missing") for f in out["failures"])


def test_none_and_low_confidence_judgments_are_not_links() -> None:
    frames = with_episodes(tables())

    def answer(prompt: str) -> object:
        return {
            "items": [
                _judgment(n, "none" if "Daniel" in b else "precedes", "A_to_B", 0.1, "weak")
                for n, _, b in _asked(prompt)
            ]
        }

    with llm_client(answer) as (client, _):
        out = relate_episodes.run(context("relate_episodes", frames, llm=client))
    assert RelateEpisodesSettings().min_confidence > 0.1  # the premise: 0.1 is below the bar
    assert out["episode_links"] == [] and out["failures"] == [] and len(out["llm_calls"]) == 1


# ---------------------------------------------------------------- episode vectors


def test_episode_vectors_are_the_mean_of_their_units_unless_set_to_embedded(
    sample_workspace, hashing_settings
) -> None:
    doc_id = "the_lighthouse_key"
    models, vectors = {}, {}
    for mode in ("units", "embedded"):
        section = hashing_settings.relate_episodes.model_copy(update={"episode_vectors": mode})
        settings = hashing_settings.model_copy(update={"relate_episodes": section})
        models[mode] = RecordingEmbedder(384)
        ctx = stage_context(sample_workspace, "relate_episodes", doc_id, settings, models[mode])
        infos = relate_episodes.episode_infos(ctx.table("episodes"), {}, "en")
        vectors[mode] = relate_episodes.candidate_vectors(ctx, ctx.table("episodes"), infos)
        if mode == "units":  # the stage's links are those the build stored
            links = relate_episodes.run(ctx)["episode_links"]
            stored = read_frame(sample_workspace, "episode_links", doc_id)
            assert [r["link_id"] for r in links] == stored["link_id"].tolist()
    texts = [i.text for i in infos]
    assert models["embedded"].seen == texts
    np.testing.assert_allclose(vectors["embedded"], HashingEmbedder(384).embed(texts), atol=1e-6)
    assert not set(texts) & set(models["units"].seen)
    # each episode's vector is the token-weighted mean of its units' vectors (derived as stored)
    assets = read_frame(sample_workspace, "asset_embeddings", doc_id)
    unit_vector = {r.unit_id: np.asarray(r.vector) for r in assets.itertuples()}
    unit_text = {r.unit_id: r.text for r in assets.itertuples()}
    episodes = ctx.table("episodes").set_index("episode_id")
    for row, info_ in enumerate(infos):
        members = list(episodes.loc[info_.episode_id, "unit_ids"])
        mean = sum(count_tokens(unit_text[u]) * unit_vector[u] for u in members)
        np.testing.assert_allclose(vectors["units"][row], mean / np.linalg.norm(mean), atol=1e-5)
