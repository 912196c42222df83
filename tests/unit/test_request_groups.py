"""Request groups whose boundaries stay put under local edits: a changed item changes its own
group and at most the groups up to the next content-defined boundary, never every later one."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from schemas.config import BreakCyclesSettings
from tasks.graph.llm import named_in
from tasks.hierarchy.break_cycles import clean_links
from tasks.hierarchy.saber_aliases import aliased, restored
from tasks.llm.requests.chunk_packs import ends_pack, pack_chunks
from tasks.llm.requests.request_groups import is_cut, stable_groups

BUDGET, LIMIT = 200, 16


def _items(costs: dict[str, int]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(key, key, (key,)) for key in costs]


def _costs(n: int) -> dict[str, int]:
    return {f"item {i}": 10 + (i * 37) % 51 for i in range(n)}


def _unchanged(before: list[list[str]], after: list[list[str]]) -> set[str]:
    """Items whose group is the same in both groupings."""
    same = {tuple(g) for g in before} & {tuple(g) for g in after}
    return {item for group in same for item in group}


def test_groups_respect_the_budget_the_limit_and_the_content_cuts() -> None:
    costs = _costs(300)
    groups = stable_groups(_items(costs), costs, BUDGET, LIMIT)
    assert [i for g in groups for i in g] == list(costs)  # every item once, in order
    for group in groups:
        assert len(group) <= LIMIT and (len(group) == 1 or sum(costs[i] for i in group) <= BUDGET)
        for item in group[:-1]:  # a content-defined cut always ends its group
            assert not is_cut(item, 1 / (2 * LIMIT))
    assert any(is_cut(g[-1], 1 / (2 * LIMIT)) for g in groups[:-1])


def test_a_grown_item_changes_its_groups_only_up_to_the_next_content_cut() -> None:
    costs = _costs(300)
    before = stable_groups(_items(costs), costs, BUDGET, LIMIT)
    edited = dict(costs, **{"item 100": costs["item 100"] + 120})
    after = stable_groups(_items(edited), edited, BUDGET, LIMIT)
    keys = list(costs)
    start = max(k for k in range(100) if is_cut(keys[k], 1 / (2 * LIMIT)))  # the segment's start
    end = next(k for k in range(100, 300) if is_cut(keys[k], 1 / (2 * LIMIT)))  # and its end
    moved = set(keys) - _unchanged(before, after)
    assert moved and moved <= set(keys[start + 1 : end + 1])
    assert len(moved) < 100  # filling up to the budget alone would move every group after item 100


def test_an_inserted_item_changes_only_its_own_segment() -> None:
    costs = _costs(300)
    before = stable_groups(_items(costs), costs, BUDGET, LIMIT)
    keys = list(costs)
    inserted = {**{k: costs[k] for k in keys[:150]}, "new item": 30, **{k: costs[k] for k in keys[150:]}}
    after = stable_groups(_items(inserted), inserted, BUDGET, LIMIT)
    end = next(k for k in range(150, 300) if is_cut(keys[k], 1 / (2 * LIMIT)))
    assert set(keys[end + 1 :]) <= _unchanged(before, after)


def _chunks(texts: list[str], sizes: list[int]) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(chunk_id=f"c{i}", char_start=i * 10, char_end=i * 10 + 9, n_tokens=n, text=t)
        for i, (t, n) in enumerate(zip(texts, sizes))
    ]


def test_extraction_packs_keep_their_boundaries_after_a_grown_scene() -> None:
    texts = [f"Scene {i}: Anna and Ben talk by the pier, take {i}." for i in range(120)]
    sizes = [80 + (i * 53) % 400 for i in range(120)]
    before = pack_chunks(_chunks(texts, sizes), "", 1000)
    grown = list(sizes)
    grown[40] += 500
    after = pack_chunks(_chunks(texts, grown), "", 1000)
    members = lambda packs: {tuple(m.chunk_id for m in p.members) for p in packs}  # noqa: E731
    end = next(k for k in range(40, 120) if ends_pack(texts[k], sizes[k], 1000))
    same = {c for pack in members(before) & members(after) for c in pack}
    assert {f"c{k}" for k in range(end + 1, 120)} <= same
    assert {f"c{k}" for k in range(end + 1, 120)}  # some packs after the edit are kept


def test_a_pack_lists_the_known_characters_it_names_alphabetically() -> None:
    known = ["Tobias", "Mara", "Nell Barrow", "Hale"]
    assert named_in(known, "MARA\nTobias waits. Halens is a town.", "en") == "Mara, Tobias"
    assert named_in(known, "Nobody here.", "en") == "(none)"
    assert named_in(["程勇", "吕受益"], "吕受益走进店里。", "zh") == "吕受益"


def _links(ids: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A two-cycle of equal weight between episodes A and B (a tie SABER breaks by name), and
    the same episodes under the ids `ids` gives them."""
    episodes = pd.DataFrame(
        {
            "episode_id": [ids["A"], ids["B"]],
            "ordinal": [0, 1],
            "first_ordinal": [1, 2],
            "last_ordinal": [1, 2],
        }
    )
    links = pd.DataFrame(
        {
            "link_id": [ids["AB"], ids["BA"]],
            "source_episode_id": [ids["A"], ids["B"]],
            "target_episode_id": [ids["B"], ids["A"]],
            "relation_type": ["precedes", "precedes"],
            "confidence": [0.8, 0.8],
        }
    )
    return links, episodes


def test_saber_breaks_ties_by_story_place_not_by_ids() -> None:
    removed = []
    for ids in (
        {"A": "epi_1", "B": "epi_2", "AB": "elk_1", "BA": "elk_2"},
        {"A": "epi_9", "B": "epi_0", "AB": "elk_9", "BA": "elk_0"},  # the ids an edit could give them
    ):
        links, episodes = _links(ids)
        named, places, alias = aliased(links, episodes)
        result = restored(clean_links(named, BreakCyclesSettings(mode="heuristic")), alias)
        name = {v: k for k, v in ids.items()}
        removed.append({name[r] for r, status in result.status.items() if status == "removed_cycle"})
        assert set(result.status) == {ids["AB"], ids["BA"]}  # the result speaks of the real ids
    assert removed[0] == removed[1] and len(removed[0]) == 1
