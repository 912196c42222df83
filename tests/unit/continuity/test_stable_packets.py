"""A scene's packet in continuity prompts says the same when an earlier scene is edited: no
character offsets (they all move after an inserted sentence) and occasions by what they are, not
by ids (which hash spans); judge requests group pairs the same way under new ids."""

from __future__ import annotations

from dataclasses import replace

from schemas.config import ContinuitySettings
from tasks.continuity.judge_requests import judge_requests
from tasks.continuity.scenes import Scene, SceneGraph, packet

ENTITIES = {
    "ent_pier": {"entity_id": "ent_pier", "name": "The Pier", "entity_type": "location"},
    "ent_nell": {"entity_id": "ent_nell", "name": "Nell", "entity_type": "character"},
}


def _graph(shift: int, prefix: str) -> SceneGraph:
    """Eight scenes, every other one at the pier with Nell; offsets moved by `shift` and ids named
    with `prefix`, as after a sentence added before them."""
    scenes = []
    for i in range(8):
        scene = Scene(
            f"{prefix}{i}",
            i,
            i + 1,
            f"EXT. THE PIER - DAY {i}",
            "THE PIER",
            "DAY",
            "EXT",
            shift + 100 * i,
            f"EXT. THE PIER - DAY {i}\nNell waits at the pier.",
        )
        if i % 2 == 0:
            scene.grounded = {"ent_pier": ("pier", shift + 100 * i + 30, shift + 100 * i + 34)}
            scene.via_occasion["ent_nell"].append(f"occ_{prefix}{i}")
        scenes.append(scene)
    occasions = {f"occ_{prefix}{i}": "Nell keeps watch on the pier at dawn." for i in range(8)}
    return SceneGraph("doc", scenes, ENTITIES, occasions)


def _candidates(graph: SceneGraph) -> list[dict]:
    at_pier = [s for s in graph.scenes if s.grounded]
    return [
        {
            "candidate_id": f"ccand_{a.section_id}_{b.section_id}",
            "scene_a": a.section_id,
            "scene_b": b.section_id,
            "shared_entity_ids": ["ent_pier", "ent_nell"],
        }
        for k, a in enumerate(at_pier)
        for b in at_pier[k + 1 :]
    ]


def test_a_packet_has_no_offsets_and_names_its_occasions() -> None:
    before, after = _graph(0, "sec_a"), _graph(40, "sec_b")
    first = packet(before.scenes[2], before, ["ent_pier"])
    assert first == packet(after.scenes[2], after, ["ent_pier"])
    assert "chars" not in first["title"] and "occ_" not in first["occasions"]
    assert first["occasions"] == "Nell keeps watch on the pier at dawn."


def test_judge_requests_are_the_same_under_new_ids_and_offsets() -> None:
    settings = ContinuitySettings(max_candidates_per_request=2)
    prompts = []
    for graph in (_graph(0, "sec_a"), _graph(40, "sec_b")):
        plan = judge_requests(graph, _candidates(graph), "en", settings)
        prompts.append([plan.values(group, "T") for group in plan.groups])
    assert prompts[0] == prompts[1] and len(prompts[0]) > 1


def test_scene_defaults_keep_older_callers_working() -> None:
    graph = SceneGraph("doc", [replace(_graph(0, "s").scenes[0])], ENTITIES)
    assert packet(graph.scenes[0], graph, [])["occasions"] == "-"
