"""The judge's packet cache builds the same packets as `scenes.packet`, call for call."""

import random

from tasks.continuity.packets import PacketCache
from tasks.continuity.scenes import Scene, SceneGraph, packet

WORDS = ["anna", "Ben", "the PIER", "lamp", "", "Carl", "car", "Anna's", "x"]


def test_cached_packets_equal_the_packets_built_one_by_one() -> None:
    rng = random.Random(1)
    kinds = ("character", "location", "object")
    entities = {f"e{i}": {"name": f"N{i}", "entity_type": rng.choice(kinds)} for i in range(8)}
    scenes = []
    for i in range(30):
        lines = [
            " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 5))) + rng.choice(["", "  ", "\t"])
            for _ in range(rng.randint(0, 12))
        ]
        scene = Scene(f"s{i}", i, i, "INT. HOUSE - DAY", "HOUSE", "DAY", "INT", 10 * i, "\n".join(lines))
        for entity_id in rng.sample(list(entities), 4):
            scene.grounded[entity_id] = (rng.choice(WORDS), 0, 1)
        scenes.append(scene)
    graph = SceneGraph("doc", scenes, entities)
    cache = PacketCache(graph)
    for _ in range(2000):
        scene, shared = rng.choice(scenes), rng.sample(list(entities), rng.randint(0, 5))
        assert cache.packet(scene, shared) == packet(scene, graph, shared)
    assert any(cache.packet(s, list(s.grounded))["evidence"] != "-" for s in scenes)  # not all empty
