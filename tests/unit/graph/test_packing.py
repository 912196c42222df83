"""Packing consecutive chunks into one extraction request and splitting the reply per chunk."""

from types import SimpleNamespace

from flows.build.dry_run import packed_requests
from schemas.responses.graph import ExtractedEntity, GraphExtraction
from tasks.graph.packing import split_reply
from tasks.llm.requests.chunk_packs import Member, ends_pack, pack_chunks

TEXT = "Anna meets Ben at the pier.\n\nLater Carl waits alone by the lighthouse."


def _chunks(sizes: list[int]) -> list[SimpleNamespace]:
    rows, start = [], 0
    for i, size in enumerate(sizes):
        rows.append(
            SimpleNamespace(
                chunk_id=f"c{i}",
                char_start=start,
                char_end=start + 5,
                n_tokens=size,
                text=TEXT[start : start + 5],
            )
        )
        start += 6
    return rows


def test_packs_respect_the_budget_and_the_dry_run_counts_the_same() -> None:
    sizes = [100, 300, 900, 50, 50, 2000, 10]
    chunks = _chunks(sizes)
    packs = pack_chunks(chunks, TEXT, 1000)
    # c2 would share a pack with c3 and c4 by the budget, but its text falls on a content-defined
    # boundary (tasks.graph.packing.ends_pack), which holds whatever the chunks before it hold.
    assert ends_pack(chunks[2].text, 900, 1000) and not any(
        ends_pack(c.text, n, 1000) for c, n in zip(chunks[:2], sizes)
    )
    assert [[m.chunk_id for m in p.members] for p in packs] == [
        ["c0", "c1"],
        ["c2"],
        ["c3", "c4"],
        ["c5"],
        ["c6"],
    ]
    assert packed_requests(sizes, 1000, [c.text for c in chunks]) == len(packs)
    assert len(pack_chunks(_chunks(sizes), TEXT, 0)) == len(sizes) == packed_requests(sizes, 0)
    assert packs[0].item_id == "c0" and packs[0].text == TEXT[0:11]


def test_a_packed_reply_is_split_by_where_names_occur() -> None:
    first, second = TEXT.split("\n\n")
    members = (Member("c0", 0, first), Member("c1", len(first) + 2, second))
    reply = GraphExtraction.model_validate(
        {
            "entities": [
                {"name": n, "type": "character", "description": "", "aliases": []}
                for n in ("Anna", "Ben", "Carl")
            ]
            + [{"name": "lighthouse", "type": "location", "description": "", "aliases": []}],
            "relations": [
                {"source": "Anna", "target": "Ben", "description": "meet", "keywords": [], "strength": 5},
                {
                    "source": "Carl",
                    "target": "the lighthouse",
                    "description": "waits",
                    "keywords": [],
                    "strength": 3,
                },
                {"source": "Anna", "target": "Carl", "description": "apart", "keywords": [], "strength": 1},
            ],
        }
    )
    parts = split_reply(reply, members, "en")
    assert [e.name for e in parts[0].entities] == ["Anna", "Ben", "Carl"]  # Carl: needed by "apart"
    assert [r.description for r in parts[0].relations] == [
        "meet",
        "apart",
    ]  # no chunk names both: the first named end
    assert [e.name for e in parts[1].entities] == ["Carl", "lighthouse"]
    assert [r.description for r in parts[1].relations] == ["waits"]


def test_a_chunk_may_receive_more_entities_than_a_single_chunk_reply_allows() -> None:
    # A combined pack answers up to 120 entities; one chunk naming 62 of them must not fail the stage.
    names = [f"Person{i:02d}" for i in range(62)]
    first = " ".join(names) + "."
    members = (Member("c0", 0, first), Member("c1", len(first) + 2, "Nobody else."))
    reply = GraphExtraction.model_construct(
        entities=[ExtractedEntity(name=n, type="character", description="", aliases=[]) for n in names],
        relations=[],
    )
    parts = split_reply(reply, members, "en")
    assert [e.name for e in parts[0].entities] == names
    assert parts[1].entities == []


def test_another_entitys_name_is_not_an_alias_when_the_reply_is_split() -> None:
    # The 0.5B model listed the other characters as the first one's aliases: Leo was placed as Anna
    # in every chunk, and his own entity went nowhere.
    members = (Member("a", 0, "ANNA checks her watch."), Member("b", 23, "Leo runs up. Anna waits."))
    reply = GraphExtraction(
        entities=[
            ExtractedEntity(name="Anna", type="character", description="", aliases=["Anna Price", "Leo"]),
            ExtractedEntity(name="Leo", type="character", description="", aliases=["Leo", "Anna"]),
        ],
        relations=[],
    )
    parts = split_reply(reply, members, "en")
    assert [[e.name for e in part.entities] for part in parts] == [["Anna"], ["Anna", "Leo"]]
    assert parts[1].entities[0].aliases == ["Anna Price"] and parts[1].entities[1].aliases == ["Leo"]
