"""The evidence-board allocator: budgets, floors, clustering and source support."""

from __future__ import annotations

from tasks.query.evidence.board import (
    BoardBudget,
    BoardItem,
    allocate,
    attach_facts,
    chunk_support,
    score_items,
)
from tasks.query.tools.types import ToolRow


def row(
    kind: str,
    item_id: str,
    text: str,
    score: float = 0.5,
    chunks: tuple[str, ...] = (),
    entities: tuple[str, ...] = (),
) -> ToolRow:
    return ToolRow(kind, item_id, text, score, "graph", "d", source_chunk_ids=chunks, entity_ids=entities)


def items(channel: str, n: int, score: float, prefix: str) -> list[BoardItem]:
    kind = {"entity": "entity", "relation": "relation", "narrative": "event"}[channel]
    return [
        BoardItem(
            row(kind, f"{prefix}{i}", f"{prefix}{i} alpha{i} beta{i} gamma{i}"),
            channel,
            score - i * 0.001,
            f"{channel}:{prefix}{i}",
        )
        for i in range(n)
    ]


def test_caps_hold_for_every_channel():
    pool = items("entity", 20, 0.9, "e") + items("narrative", 20, 0.8, "n") + items("relation", 40, 0.95, "r")
    board = allocate(pool, BoardBudget())
    assert (len(board["entity"]), len(board["narrative"]), len(board["relation"])) == (8, 8, 16)


def test_floors_keep_entity_and_narrative_items_against_stronger_relations():
    # Relations score far higher, but a tight relation cap must not starve the floors.
    pool = items("relation", 40, 0.99, "r") + items("entity", 6, 0.1, "e") + items("narrative", 6, 0.1, "n")
    board = allocate(pool, BoardBudget(entity=8, narrative=8, relation=16))
    assert len(board["entity"]) >= 5 and len(board["narrative"]) >= 5
    scarce = allocate(items("relation", 10, 0.9, "r") + items("entity", 2, 0.1, "e"), BoardBudget())
    assert len(scarce["entity"]) == 2 and len(scarce["narrative"]) == 0  # floors never invent items


def test_one_representative_per_cluster_and_near_duplicates_merge():
    same_source = [
        BoardItem(
            row("event", f"n{i}", f"event {i} text distinct {'x' * i}", chunks=("c1",)),
            "narrative",
            0.9 - i / 10,
            "narrative:c1",
        )
        for i in range(4)
    ]
    board = allocate(same_source, BoardBudget())
    assert [i.row.item_id for i in board["narrative"]] == ["n0"]
    duplicates = [
        BoardItem(row("event", "a", "Tom hides the brass key in the van"), "narrative", 0.9, "narrative:a"),
        BoardItem(row("event", "b", "Tom hides the brass key in his van"), "narrative", 0.8, "narrative:b"),
        BoardItem(row("event", "c", "Margaret lights the reserve lamp"), "narrative", 0.7, "narrative:c"),
    ]
    assert [i.row.item_id for i in allocate(duplicates, BoardBudget())["narrative"]] == ["a", "c"]


def test_scoring_prefers_question_entities_and_relation_pairs():
    rows = [
        row("relation", "r1", "Tom — Margaret: siblings", 0.5, entities=("tom", "mag")),
        row("relation", "r2", "Tom — Ellis: rivals", 0.5, entities=("tom", "ell")),
    ]
    scored = score_items(rows, "How are Tom and Margaret related?", {}, {"tom", "mag"})
    assert scored[0].row.item_id == "r1" and scored[0].score > scored[1].score


def test_facts_attach_top_five_per_entity():
    entity = BoardItem(row("entity", "tom", "Tom (character)"), "entity", 0.9, "entity:tom")
    facts = [row("fact", f"f{i}", f"fact {i}", score=1 - i / 10, entities=("tom",)) for i in range(8)]
    facts.append(row("fact", "other", "fact about someone else", entities=("ann",)))
    attach_facts([entity], facts, per_entity=5)
    assert [f.item_id for f in entity.facts] == ["f0", "f1", "f2", "f3", "f4"]


def test_chunk_support_adds_up_across_tools():
    board = {
        "entity": [BoardItem(row("entity", "e", "x", chunks=("c1", "c2")), "entity", 0.8, "entity:e")],
        "relation": [],
        "narrative": [BoardItem(row("event", "v", "y", chunks=("c1",)), "narrative", 0.6, "narrative:v")],
    }
    support = chunk_support(board, [row("chunk", "c3", "z", chunks=("c3",))])
    assert support["c1"][0] > support["c2"][0] and len(support["c1"][1]) == 2
    assert "c3" in support
