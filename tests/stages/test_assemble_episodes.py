"""assemble_episodes: coherence, greedy bounded clustering, rows, offline and LLM text."""

from __future__ import annotations

import re

import pandas as pd

from schemas.config import AssembleEpisodesSettings, load_settings
from tasks.hierarchy import assemble_episodes
from tasks.hierarchy.assemble_episodes import Draft, Signals, assemble, coherence, participant_idf
from tasks.embeddings import HashingEmbedder
from tasks.hierarchy.episode_text import compose_text
from tasks.hierarchy.units import Unit, load_units
from tasks.tables.io import read_frame
from tasks.text import count_tokens
from tests.fixtures.hierarchy.llm import llm_client
from tests.fixtures.hierarchy.mini import DOC, context, contract_problems, sid, tables
from tests.fixtures.stage_context import stage_context
from tests.fixtures.embedders import RecordingEmbedder

UNIT_TABLES = ("sections", "entities", "events", "interactions", "occasions")
TYPES = {"ann": "character", "bob": "character", "cat": "character", "key": "object"}


def unit(
    uid: str,
    ordinal: int,
    index: int,
    people: tuple[str, ...] = (),
    kind: str = "event",
    text: str = "",
    occasion: tuple[str, ...] = (),
    event_id: str | None = None,
) -> Unit:
    return Unit(
        unit_id=uid,
        kind=kind,
        index=index,
        ordinal=ordinal,
        section_id=f"s{ordinal}",
        char_start=index,
        participants=people,
        setting_id=None,
        description=text or uid,
        unit_type="action",
        event_id=event_id,
        occasion_ids=occasion,
        section_ids=(f"s{ordinal}",),
    )


def signals(units: list[Unit], max_gap: int = 3) -> Signals:
    return Signals(types=TYPES, idf=participant_idf(units), location={}, vectors=None, max_gap=max_gap)


def episodes_of(frames: dict[str, pd.DataFrame], **settings: object) -> pd.DataFrame:
    # The mini story checks how units group across scenes; scene-bounded screenplays have their own test.
    config = load_settings(overrides={"assemble_episodes": {"scene_bounded": False, **settings}})
    return pd.DataFrame(assemble_episodes.run(context("assemble_episodes", frames, config))["episodes"])


def test_coherence_rewards_shared_people_and_continuity_and_decays_with_distance() -> None:
    a, b = unit("a", 1, 0, ("ann", "key")), unit("b", 1, 1, ("ann", "key"))
    far = unit("c", 4, 5, ("ann", "key"))
    stranger = unit("d", 1, 1, ("cat",))
    draft = Draft()
    units = [a, b, far, stranger]
    assemble_episodes._add(draft, a, signals(units), None)
    near, parts = coherence(b, draft, signals(units))
    assert parts["participants"] == 1.0 and parts["goal_conflict"] == 1.0 and parts["adjacency"] == 1.0
    assert near >= 0.7
    later, later_parts = coherence(far, draft, signals(units))
    assert 0 < later_parts["temporal"] < 1 and later < near
    assert coherence(stranger, draft, signals(units))[0] < AssembleEpisodesSettings().min_coherence


def test_explicit_unit_link_counts_as_causal_dependency() -> None:
    event, linked = unit("e", 1, 0, ("ann",)), unit("i", 2, 1, ("cat",), kind="interaction", event_id="e")
    draft = Draft()
    assemble_episodes._add(draft, event, signals([event, linked]), None)
    assert coherence(linked, draft, signals([event, linked]))[1]["causal"] == 1.0


def test_units_group_by_thread_and_a_distant_section_starts_a_new_episode() -> None:
    units = [
        unit("a1", 1, 0, ("ann", "key")),
        unit("b1", 1, 1, ("bob",)),
        unit("a2", 2, 2, ("ann", "key")),
        unit("b2", 2, 3, ("bob",)),
        unit("a3", 9, 4, ("ann", "key")),
    ]
    drafts = assemble(units, signals(units), AssembleEpisodesSettings())
    assert [[u.unit_id for u in d.units] for d in drafts] == [["a1", "a2"], ["b1", "b2"], ["a3"]]
    assert all(len(d.scores) == len(d.units) - 1 for d in drafts)


def test_episode_size_and_open_episode_bounds() -> None:
    units = [unit(f"u{i}", 1, i, ("ann",)) for i in range(7)]
    drafts = assemble(units, signals(units), AssembleEpisodesSettings(max_units_per_episode=3))
    assert [len(d.units) for d in drafts] == [3, 3, 1]
    # Ten unrelated threads but only four open episodes: each unit is scored at most four times.
    many = [unit(f"t{i}", 1, i, (f"p{i % 10}",)) for i in range(200)]
    calls = []
    original = assemble_episodes.coherence

    def counting(*args: object) -> tuple[float, dict[str, float]]:
        calls.append(1)
        return original(*args)  # type: ignore[arg-type]

    assemble_episodes.coherence = counting  # type: ignore[assignment]
    try:
        assemble(
            many,
            Signals({f"p{i}": "character" for i in range(10)}, participant_idf(many), {}, None, 3),
            AssembleEpisodesSettings(max_open_episodes=4),
        )
    finally:
        assemble_episodes.coherence = original  # type: ignore[assignment]
    assert len(calls) <= 4 * len(many)


def test_units_load_in_source_order_with_occasions_first_in_their_section() -> None:
    frames = tables()
    units = load_units(
        frames["sections"], frames["entities"], frames["events"], frames["interactions"], frames["occasions"]
    )
    assert [u.unit_id for u in units][:4] == ["o1", "o3", "e1", "e2"]
    by_id = {u.unit_id: u for u in units}
    assert by_id["o3"].ordinal == 1 and by_id["o3"].section_ids == (sid(1), sid(3), sid(4))
    assert by_id["i3"].event_id == "e6" and by_id["i3"].participants == ("nia", "ellis")
    assert "o1" in by_id["e1"].occasion_ids  # same section, shared participant
    assert [u.index for u in units] == list(range(len(units)))


def test_offline_episodes_of_the_mini_story() -> None:
    frames = tables()
    episodes = episodes_of(frames)
    assert [list(ids) for ids in episodes["unit_ids"]] == [
        ["o1", "o3", "e1", "e2", "e4", "e5", "i2"],
        ["o2", "e3", "i1", "e6", "i3"],
        ["e7"],
    ]
    first = episodes.iloc[0]
    # The background occasion spans sections 1, 3, 4 but counts only where it is anchored.
    assert list(first["section_ids"]) == [sid(1), sid(3), sid(4)] and (
        first["first_ordinal"],
        first["last_ordinal"],
    ) == (1, 4)
    assert list(first["participant_ids"])[:2] == ["margaret", "key"]
    assert (
        first["title"].startswith("Margaret and Daniel: ")
        and "decides to keep the brass key" in first["goal"]
    )
    assert "Margaret takes the brass key" in first["summary"]
    assert list(episodes["ordinal"]) == [1, 2, 3] and set(episodes["method"]) == {"heuristic"}
    assert pd.isna(episodes.iloc[2]["coherence"]) and 0.35 <= episodes.iloc[0]["coherence"] <= 1.0
    assert contract_problems("episodes", episodes, frames) == []
    assert episodes.equals(episodes_of(tables()))  # deterministic ids and order


def test_screenplay_episodes_stay_inside_one_scene_unless_told_otherwise() -> None:
    bounded = episodes_of(tables(), scene_bounded=True)
    assert len(bounded) > len(episodes_of(tables()))
    assert all(len(sections) == 1 for sections in bounded["section_ids"])
    assert sorted(u for ids in bounded["unit_ids"] for u in ids) == sorted(
        u for ids in episodes_of(tables())["unit_ids"] for u in ids
    )  # every unit still in exactly one episode
    prose = tables()
    prose["documents"].loc[0, "kind"] = "prose"
    assert episodes_of(prose, scene_bounded=True).equals(episodes_of(prose))  # prose keeps its gaps


def test_settings_change_the_grouping() -> None:
    strict = episodes_of(tables(), min_coherence=0.95)
    assert len(strict) > len(episodes_of(tables()))
    # Every unit alone, except the background occasion o3, which joins the episode of its first section.
    assert all(len([u for u in ids if u != "o3"]) == 1 for ids in strict["unit_ids"])
    assert [list(ids) for ids in strict["unit_ids"] if "o3" in ids] == [["o1", "o3"]]


def test_background_occasions_join_an_episode_without_opening_or_stretching_one() -> None:
    units = [
        unit("a1", 1, 0, ("ann",)),
        unit("b1", 1, 1, ("bob",)),
        unit("b1x", 1, 3, ("bob",)),
        unit("a2", 2, 4, ("ann",)),
        unit("b2", 5, 5, ("bob",)),
    ]
    background = Unit(
        unit_id="bg",
        kind="occasion",
        index=2,
        ordinal=1,
        section_id="s1",
        char_start=-1,
        participants=("bob", "cat"),
        setting_id=None,
        description="A long strike.",
        unit_type="situation",
        event_id=None,
        occasion_ids=("bg",),
        section_ids=("s1", "s5"),
    )
    ordered = sorted(units + [background], key=lambda u: u.index)
    drafts = assemble(ordered, signals(ordered), AssembleEpisodesSettings())
    assert [[u.unit_id for u in d.units] for d in drafts] == [["a1", "a2"], ["b1", "bg", "b1x"], ["b2"]]
    assert drafts[1].people == {"bob": 2}  # the background's cast does not become the episode's
    full = assemble(ordered, signals(ordered), AssembleEpisodesSettings(max_units_per_episode=2))
    host = next(d for d in full if any(u.unit_id == "bg" for u in d.units))
    # Episodes of its first section are full: it joins in its later section, anchored there.
    assert [u.unit_id for u in host.units] == ["bg", "b2"] and {u.section_id for u in host.units} == {"s5"}


def test_an_empty_scene_folds_into_the_episode_that_follows() -> None:
    empty = unit("o9", 3, 2, (), kind="occasion", text="Scene at the cliff road, night.")
    units = [unit("a1", 1, 0, ("ann",)), unit("a2", 1, 1, ("ann",)), empty, unit("b1", 4, 3, ("bob",))]
    drafts = assemble(units, signals(units), AssembleEpisodesSettings())
    assert [[u.unit_id for u in d.units] for d in drafts] == [["a1", "a2"], ["o9", "b1"]]


def test_flashback_time_cue_is_stated_in_the_summary_and_empty_input_gives_no_episodes() -> None:
    frames = tables()
    frames["events"].loc[frames["events"]["event_id"] == "e7", "time_cue"] = "years earlier"
    last = episodes_of(frames).iloc[-1]
    assert last["summary"].startswith("Flashback: ")
    for name in ("events", "interactions", "occasions"):
        frames[name] = frames[name].iloc[0:0]
    assert episodes_of(frames).empty


def test_embedder_similarity_enters_the_coherence() -> None:
    frames = tables()
    out = assemble_episodes.run(context("assemble_episodes", frames, embedder=HashingEmbedder(64)))
    assert [e["unit_ids"] for e in out["episodes"]][-1] == ["e7"]
    assert contract_problems("episodes", out["episodes"], frames) == []


def test_llm_titles_episodes_and_a_failed_item_keeps_the_composed_text() -> None:
    def answer(prompt: str) -> object:
        blocks = re.split(r"^(\d+)\. sections? \d.*$", prompt, flags=re.MULTILINE)
        numbered = list(zip(blocks[1::2], blocks[2::2]))
        if all("paraffin" in block for _, block in numbered):  # asked again on its own: a bad reply
            return "this is not JSON"
        items = []
        for number, block in numbered:
            if "paraffin" in block:  # left out of the batched reply
                continue
            who = "Ellis" if "gale warning" in block else "Margaret"
            items.append(
                {
                    "number": int(number),
                    "title": f"{who} acts",
                    "summary": f"{who} acts in the story.",
                    "goal": "keep the light",
                }
            )
        return {"items": items}

    frames = tables()
    with llm_client(answer) as (client, server):
        out = assemble_episodes.run(context("assemble_episodes", frames, llm=client))
        prompts = [r.body["messages"][-1]["content"] for r in server.chat_requests()]
    episodes = pd.DataFrame(out["episodes"])
    assert list(episodes["method"]) == ["llm", "llm", "heuristic"]
    assert list(episodes["title"])[:2] == ["Margaret acts", "Ellis acts"]
    assert episodes.iloc[2]["title"] == "Margaret: Margaret lights the old paraffin lamp."
    assert [f["item_id"] for f in out["failures"]] == [episodes.iloc[2]["episode_id"]]
    assert out["llm_calls"] and all(c["stage"] == "assemble_episodes" for c in out["llm_calls"])
    assert any("Nia confronts Ellis with the hidden warning." in p for p in prompts)
    assert len(prompts) == 1 + 2  # the three episodes in one request; the left-out one asked again (+ re-ask)
    assert contract_problems("episodes", episodes, frames) == []


def test_chinese_documents_get_chinese_joiners() -> None:
    frames = tables()
    frames["documents"].loc[0, "language"] = "zh"
    episodes = episodes_of(frames)
    assert episodes.iloc[0]["title"].startswith("Margaret和Daniel：")
    assert set(episodes["doc_id"]) == {DOC}


def test_offline_title_skips_character_introductions_and_summary_skips_scene_frames() -> None:
    units = [
        unit("o", 1, 0, ("ann",), kind="occasion", text="Scene at the ward, night, with Ann."),
        unit("a", 1, 1, ("ann",), text="ANN LEE (30s), a night nurse, sorts the charts."),
        unit("b", 1, 2, ("ann",), text="Ann opens the locked cabinet."),
    ]
    drafts = assemble(units, signals(units), AssembleEpisodesSettings())
    text = compose_text(drafts[0].units, drafts[0].people, {"ann": "Ann"}, "en", 1)
    assert text["title"] == "Ann: Ann opens the locked cabinet."
    assert text["summary"] == "ANN LEE (30s), a night nurse, sorts the charts. Ann opens the locked cabinet."


def test_unit_vectors_are_derived_from_the_sentences_units_quote_unless_set_to_embedded(
    sample_workspace, hashing_settings
) -> None:
    doc_id = "the_lighthouse_key"
    seen, episodes = {}, {}
    for mode in ("derived", "embedded"):
        section = hashing_settings.assemble_episodes.model_copy(update={"unit_vectors": mode})
        settings = hashing_settings.model_copy(update={"assemble_episodes": section})
        model = RecordingEmbedder(384)
        ctx = stage_context(sample_workspace, "assemble_episodes", doc_id, settings, model)
        rows = assemble_episodes.run(ctx)["episodes"]
        assert contract_problems("episodes", rows, ctx.tables) == []
        seen[mode], episodes[mode] = model.seen, rows
    units = load_units(*(read_frame(sample_workspace, t, doc_id) for t in UNIT_TABLES))
    assert seen["embedded"] == [u.description or u.unit_type for u in units]
    # derived: only texts quoting no sentence (occasions) and the other words of quoting ones
    events = {u.description for u in units if u.kind == "event"}
    interactions = {u.description for u in units if u.kind == "interaction"}
    assert not (events | interactions) & set(seen["derived"])
    assert {u.description for u in units if u.kind == "occasion"} <= set(seen["derived"])
    assert sum(map(count_tokens, seen["derived"])) < sum(map(count_tokens, seen["embedded"])) / 2
    # the default's episodes as stored by the build
    stored = read_frame(sample_workspace, "episodes", doc_id)
    assert [list(u) for u in stored["unit_ids"]] == [e["unit_ids"] for e in episodes["derived"]]
