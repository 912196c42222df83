"""Continuity checking (paper appendix D.1) on the bundled screenplay, offline: candidates only
from shared entities with the all-pairs count recorded, one offline-rule judgment per
candidate, critiqued preliminary chains and final chains whose scenes all ground a shared cue;
plus the rule, the critic and the split logic on small cases."""

from __future__ import annotations

import math
from collections import Counter

import networkx as nx
import pandas as pd
import pytest

from tasks.continuity.candidates import entity_pairs, pairs_sharing_any, text_similarity
from tasks.continuity.chains import grounded_runs, offline_critique, split_groups
from tasks.continuity.judge import rule_judgment
from tasks.continuity.scenes import Scene, SceneGraph
from tasks.tables.io import read_frame

DOC = "the_lighthouse_key"


@pytest.fixture(scope="module")
def tables(sample_workspace) -> dict[str, pd.DataFrame]:
    names = (
        "sections",
        "entities",
        "mentions",
        "continuity_counts",
        "continuity_candidates",
        "continuity_judgments",
        "continuity_chains",
        "failures",
    )
    return {name: read_frame(sample_workspace, name, DOC) for name in names}


def test_candidates_come_from_shared_entities_and_counts_are_recorded(tables):
    counts = tables["continuity_counts"].iloc[0]
    scenes = tables["sections"][tables["sections"]["section_kind"] == "scene"]
    assert counts.n_scenes == len(scenes) == 16 and counts.all_pairs == 120
    candidates = tables["continuity_candidates"]
    assert counts.candidates == len(candidates) <= counts.entity_pairs <= counts.all_pairs
    # Every candidate shares an entity grounded in both scenes or linked to both by an occasion.
    linked = tables["mentions"].groupby("section_id")["entity_id"].apply(set).to_dict()
    for row in candidates.itertuples():
        assert row.ordinal_a < row.ordinal_b and len(row.shared_entity_ids) > 0
        grounded = (
            set(row.shared_entity_ids) & linked.get(row.scene_a, set()) & linked.get(row.scene_b, set())
        )
        assert grounded or len(row.via_occasion_ids) > 0, row.candidate_id
    # A pair of scenes sharing nothing is never a candidate: scene 13 (stairwell, Tom and Skipper alone)
    # and scene 4 (the van: Tom and Nia) share Tom; the preamble is never a scene.
    assert not set(candidates["scene_a"]) & set(
        tables["sections"].query("section_kind == 'preamble'")["section_id"]
    )


def test_every_candidate_has_one_offline_rule_judgment(tables):
    judgments = tables["continuity_judgments"]
    assert sorted(judgments["candidate_id"]) == sorted(tables["continuity_candidates"]["candidate_id"])
    assert (judgments["method"] == "offline_rule").all()
    positive = judgments[judgments["is_continuity"]]
    headings = dict(zip(tables["sections"]["section_id"], tables["sections"]["location"]))
    pairs = {(headings[a], headings[b]) for a, b in zip(positive["scene_a"], positive["scene_b"])}
    # Same set at compatible times of day; HARBOUR OFFICE - DAY (scene 8) is blocked by the lighting change.
    assert pairs == {("LIGHTHOUSE LAMP ROOM", "LIGHTHOUSE LAMP ROOM"), ("HARBOUR OFFICE", "HARBOUR OFFICE")}
    blocked = judgments[
        judgments["blockers"].map(lambda b: any("time of day differs: NIGHT vs DAY" in x for x in b))
    ]
    assert len(blocked) > 0 and not blocked["is_continuity"].any()


def test_final_chains_share_a_grounded_cue_in_every_scene(sample_workspace, tables):
    chains = tables["continuity_chains"]
    finals = chains[chains["kind"] == "final"]
    assert len(finals) == 2 and set(chains["kind"]) == {"preliminary", "final"}
    text = read_frame(sample_workspace, "documents", DOC).iloc[0]["text"]
    sections = tables["sections"].set_index("section_id")
    judgment_ids = set(tables["continuity_judgments"]["judgment_id"])
    for chain in finals.itertuples():
        assert (
            chain.decision == "keep"
            and chain.method == "offline_rule"
            and set(chain.judgment_ids) <= judgment_ids
        )
        cues = list(chain.cues)
        assert [c["entity_id"] for c in cues] == list(chain.shared_entity_ids) and cues[0][
            "type"
        ] == "location"
        for cue in cues:
            assert [s["section_id"] for s in cue["spans"]] == list(chain.section_ids)
            for span in cue["spans"]:
                section = sections.loc[span["section_id"]]
                assert section.char_start <= span["char_start"] < span["char_end"] <= section.char_end
                assert text[span["char_start"] : span["char_end"]] == span["surface"]
    assert tables["failures"].empty


def _graph(*scenes: Scene, kinds: dict[str, str]) -> SceneGraph:
    entities = {e: {"entity_id": e, "name": e.title(), "entity_type": t} for e, t in kinds.items()}
    return SceneGraph("doc", list(scenes), entities)


def _scene(index: int, time: str, interior: str, grounded: list[str], location: str = "") -> Scene:
    return Scene(
        f"s{index}",
        index,
        index,
        f"{interior}. {location} - {time}",
        location,
        time,
        interior,
        0,
        "",
        grounded={e: (e, 0, len(e)) for e in grounded},
    )


def test_pairs_sharing_any_entity_are_counted_without_listing_them():
    kinds = {"office": "location", "lamp": "object", "ann": "character", "bob": "character"}
    scenes = [
        _scene(0, "DAY", "INT", ["office", "ann"]),
        _scene(1, "DAY", "INT", ["ann"]),
        _scene(2, "DAY", "INT", ["lamp"]),
        _scene(3, "DAY", "INT", ["lamp", "ann", "bob"]),
        _scene(4, "DAY", "INT", []),
        _scene(5, "DAY", "INT", ["bob", "office"]),
    ]
    graph = _graph(*scenes, kinds=kinds)
    scenes[4].via_occasion["ann"].append("occ_1")  # linked by an occasion counts as well
    assert pairs_sharing_any(graph) == len(entity_pairs(graph)) == 9  # ann 6, office, lamp, bob


def test_text_similarity_with_given_norms_is_the_same_cosine():
    a, b = Counter({"key": 3, "van": 1, "tin": 2}), Counter({"key": 1, "tin": 1, "road": 4})
    norm = lambda c: math.sqrt(sum(v * v for v in c.values()))  # noqa: E731
    assert (
        text_similarity(a, b) == text_similarity(a, b, norm(a), norm(b)) == round(5 / (norm(a) * norm(b)), 4)
    )
    assert text_similarity(a, Counter()) == 0.0


def test_rule_needs_a_shared_location_and_compatible_setup():
    kinds = {"office": "location", "lamp": "object", "ann": "character"}
    night, midnight = (
        _scene(0, "NIGHT", "INT", ["office", "lamp", "ann"]),
        _scene(1, "MIDNIGHT", "INT", ["office", "lamp"]),
    )
    graph = _graph(night, midnight, kinds=kinds)
    verdict = rule_judgment(graph, night, midnight, ["office", "lamp", "ann"])
    assert verdict["is_continuity"] and verdict["confidence"] == 0.7 and verdict["blockers"] == []
    assert (
        "both scenes are set at Office" in verdict["support"]
        and "Lamp appears in both scenes" in verdict["support"]
    )
    day = _scene(2, "DAY", "EXT", ["office"])
    verdict = rule_judgment(graph, night, day, ["office"])
    assert not verdict["is_continuity"] and len(verdict["blockers"]) == 2
    cast_only = rule_judgment(graph, night, _scene(3, "NIGHT", "INT", ["ann"]), ["ann"])
    assert not cast_only["is_continuity"] and cast_only["reason"] == "no shared source-grounded location"
    night.changes.append(("the lamp shatters", {"lamp"}))
    assert not rule_judgment(graph, night, midnight, ["office", "lamp"])["is_continuity"]


def test_critic_splits_at_weak_edges_and_runs_keep_a_shared_cue():
    kinds = {"office": "location", "van": "location"}
    scenes = [_scene(i, "NIGHT", "INT", g) for i, g in enumerate([["office"], ["office"], ["van"], ["van"]])]
    graph = _graph(*scenes, kinds=kinds)
    edges = nx.Graph()
    for a, b in (("s0", "s1"), ("s2", "s3"), ("s0", "s2")):
        edges.add_edge(a, b, confidence=0.8, judgment_id=f"{a}{b}")
    critique = offline_critique(graph, ["s0", "s1", "s2", "s3"], edges)
    assert critique["decision"] == "split" and critique["weak_edges"] == [("s1", "s2")]
    assert critique["coherence_score"] == round(2 / 3, 3)
    assert split_groups(["s0", "s1", "s2", "s3"], critique) == [["s0", "s1"], ["s2", "s3"]]
    assert grounded_runs(graph, ["s0", "s1", "s2", "s3"]) == [["s0", "s1"], ["s2", "s3"]]
    assert split_groups(["s0", "s1"], {"decision": "drop"}) == []
    suggested = {"decision": "split", "suggested_splits": [["s3", "s2", "x"], ["s0"]], "weak_edges": []}
    assert split_groups(["s0", "s1", "s2", "s3"], suggested) == [["s2", "s3"]]
