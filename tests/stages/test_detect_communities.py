"""detect_communities: Louvain over the entity graph gives the groups that belong together, the same
on every run, as contract-abiding `communities` rows."""

from __future__ import annotations

import pandas as pd
import pyarrow as pa

from schemas.config import DetectCommunitiesSettings
from tasks.summaries.detect_communities import community_rows, entity_graph, find_communities
from tests.fixtures.hierarchy.mini import contract_problems

# Two households tied inside and joined by one weak relation; a proxy tied to both stays out.
PEOPLE = ["ann", "ben", "cal", "dora", "eli", "fay", "someone"]
TIES = [
    ("ann", "ben", 5), ("ben", "cal", 4), ("ann", "cal", 3),
    ("dora", "eli", 5), ("eli", "fay", 4), ("dora", "fay", 3),
    ("cal", "dora", 1), ("someone", "ann", 9), ("someone", "fay", 9),
]  # fmt: skip


def _frames() -> dict[str, pd.DataFrame]:
    entities = pd.DataFrame(
        {
            "entity_id": PEOPLE,
            "name": [p.title() for p in PEOPLE],
            "entity_type": "character",
            "is_proxy": [p == "someone" for p in PEOPLE],
            "n_mentions": [9, 3, 2, 7, 4, 1, 30],
        }
    )
    relations = pd.DataFrame(
        {
            "relation_id": [f"r{i}" for i in range(len(TIES))],
            "source_entity_id": [a for a, _, _ in TIES],
            "target_entity_id": [b for _, b, _ in TIES],
            "weight": [float(w) for _, _, w in TIES],
        }
    )
    # The second household first appears in section 1, the first in section 2.
    mentions = pd.DataFrame({"entity_id": PEOPLE[:6], "section_id": ["s2", "s2", "s3", "s1", "s1", "s3"]})
    sections = pd.DataFrame({"section_id": ["s1", "s2", "s3"], "ordinal": [1, 2, 3]})
    return {"entities": entities, "relations": relations, "mentions": mentions, "sections": sections}


def _rows(settings: DetectCommunitiesSettings) -> list[dict]:
    frames = _frames()
    graph = entity_graph(frames["entities"], frames["relations"])
    found = find_communities(graph, settings)
    ordinals = {"s1": 1, "s2": 2, "s3": 3}
    return community_rows("d", found, graph, frames["entities"], frames["mentions"], ordinals, "en", 12)


def test_the_two_households_are_two_communities_in_story_order():
    rows = _rows(DetectCommunitiesSettings())
    assert [sorted(r["member_ids"]) for r in rows] == [["dora", "eli", "fay"], ["ann", "ben", "cal"]]
    first, second = rows
    assert first["ordinal"] == 1 and first["first_ordinal"] == 1 and second["first_ordinal"] == 2
    assert first["member_ids"][0] == "dora" and first["name"] == "Dora, Eli and Fay"  # most mentioned first
    assert second["internal_weight"] == 12.0 and second["n_mentions"] == 14
    assert all("someone" not in r["member_ids"] for r in rows)


def test_communities_are_the_same_on_every_run():
    settings = DetectCommunitiesSettings()
    assert _rows(settings) == _rows(settings)


def test_community_rows_keep_the_contracts():
    frames = {
        "entities": pa.table({"entity_id": PEOPLE}),
        "sections": pa.table({"section_id": ["s1", "s2", "s3"]}),
    }
    rows = _rows(DetectCommunitiesSettings())
    assert contract_problems("communities", rows, frames) == []
    broken = [
        {**rows[0], "n_members": 5},
        {**rows[1], "member_ids": rows[1]["member_ids"] + ["dora"], "n_members": 4},
    ]
    problems = contract_problems("communities", broken, frames)
    assert any("member count matches" in p for p in problems)
    assert any("an entity is in one community" in p for p in problems)


def test_no_relation_no_community():
    frames = _frames()
    graph = entity_graph(frames["entities"], frames["relations"].iloc[:0])
    assert find_communities(graph, DetectCommunitiesSettings()) == []
