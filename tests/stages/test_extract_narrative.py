"""extract_narrative: name resolution, dialogue cues, the offline extractor on a screenplay
scene (vocatives, a question, a departure), a Chinese scene and a prose story, and the LLM
path through the fake server including malformed and truncated replies."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from schemas.config import ExtractGraphSettings, ExtractNarrativeSettings, SplitChunksSettings
from tasks.entity_lexicon import EntityLexicon, resolve_names
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.narrative.cues import event_type, line_type
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.narrative.builders import FISHERMAN, HARBOUR, SHOP_ZH, build_one, frames
from tests.fixtures.openai_server import FakeOpenAIServer, last_user_text

SMALL_CHUNKS = SplitChunksSettings(chunk_tokens=50)  # several chunks from a short scene
ONE_PER_CHUNK = ExtractNarrativeSettings(pack_tokens=0)
SEPARATE_PASSES = ExtractGraphSettings(combined=False)  # this file tests the narrative pass itself
UNITS = ("entities", "chunks", "events", "interactions", "occasions", "failures", "llm_calls")
ENTITIES = [
    {
        "entity_id": "e_margaret",
        "name": "Margaret Hale",
        "entity_type": "character",
        "aliases": ["Maggie", "MARGARET"],
        "degree": 3,
    },
    {"entity_id": "e_tom", "name": "Tom Hale", "entity_type": "character", "aliases": ["TOM"], "degree": 2},
    {"entity_id": "e_will", "name": "Will", "entity_type": "character", "aliases": [], "degree": 1},
    {"entity_id": "e_cheng", "name": "程勇", "entity_type": "character", "aliases": ["老程"], "degree": 2},
    {"entity_id": "e_father", "name": "程勇爸爸", "entity_type": "character", "aliases": [], "degree": 1},
]


def test_resolve_names_uses_aliases_boundaries_and_longest_match() -> None:
    assert resolve_names("Maggie", ENTITIES) == ["e_margaret"]
    assert resolve_names("MARGARET (V.O.)", ENTITIES) == ["e_margaret"]
    assert resolve_names("Tom Hale and Margaret walk", ENTITIES) == ["e_tom", "e_margaret"]
    assert resolve_names("Hale", ENTITIES) == []  # shared surname: ambiguous, never guessed
    assert resolve_names("Tomorrow I will go", ENTITIES) == []  # word boundaries; "will" is no name
    assert resolve_names("程勇爸爸不耐烦地", ENTITIES) == ["e_father"]  # longest match first
    assert resolve_names("老程！", ENTITIES) == ["e_cheng"]
    spans = EntityLexicon.from_entities(ENTITIES).find_mentions("Tom, listen. Will!", offset=10)
    assert [(m.start, m.end, m.entity_id) for m in spans] == [(10, 13, "e_tom"), (23, 27, "e_will")]


@pytest.mark.parametrize(
    "line, language, expected",
    [
        ("What am I supposed to do with it?", "en", "ask"),
        ("Maggie, listen to me.", "en", "command"),
        ("Don't tell the boats.", "en", "warn"),
        ("Please, could you keep it?", "en", "request"),
        ("No. I won't do it.", "en", "refuse"),
        ("You're lying to me, Ellis.", "en", "accuse"),
        ("I know what weekend it is.", "en", "inform"),
        ("你明天还来吗？", "zh", "ask"),
        ("我警告你，下个月再不交就搬走。", "zh", "warn"),
        ("求你了，帮帮我。", "zh", "request"),
    ],
)
def test_line_type_cues(line: str, language: str, expected: str) -> None:
    assert line_type(line, language) == expected


def test_event_type_from_verbs_skips_negation() -> None:
    assert event_type("Nia leaves the office.", "en") == "departure"
    assert event_type("Margaret arrives, hood up.", "en") == "arrival"
    assert event_type("He does not hear it and decides to stay.", "en") == "decision"
    assert event_type("程勇发现店铺被封。", "zh") == "discovery"


def _names(tables: dict[str, pd.DataFrame]) -> dict[str, str]:
    return dict(zip(tables["entities"]["entity_id"], tables["entities"]["name"]))


def _assert_grounded(tables: dict[str, pd.DataFrame], text: str, names_in_span: bool = True) -> None:
    """Units lie inside their chunk, every participant, subject and object id is an entity, and (offline)
    an event's span names one of its participants."""
    chunks = tables["chunks"].set_index("chunk_id")
    known = set(tables["entities"]["entity_id"])
    for table in ("events", "interactions"):
        for row in tables[table].itertuples():
            chunk = chunks.loc[row.chunk_id]
            assert chunk.char_start <= row.char_start <= row.char_end <= chunk.char_end, (table, row)
            assert chunk.section_id == row.section_id
    for row in tables["events"].itertuples():
        assert set(row.participant_ids) <= known
        if names_in_span and len(row.participant_ids):
            surfaces = [
                re.escape(n.split()[0])
                for n in tables["entities"].set_index("entity_id").loc[list(row.participant_ids), "name"]
            ]
            assert re.search("|".join(surfaces), text[row.char_start : row.char_end], re.IGNORECASE), (
                row.description
            )
    for row in tables["interactions"].itertuples():
        assert row.subject_id in known and set(row.object_ids) <= known and len(row.object_ids) >= 1
    for row in tables["occasions"].itertuples():
        assert set(row.participant_ids) <= known and (pd.isna(row.setting_id) or row.setting_id in known)


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, pd.DataFrame], str]:
    from schemas.config import load_settings

    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    report, workspace, doc_id = build_one(
        HARBOUR, tmp_path_factory.mktemp("harbour") / "ws", settings, facts=False
    )
    assert report.ok, report.summary()
    return frames(workspace, doc_id, *UNITS[:5]), HARBOUR.read_text(encoding="utf-8")


def test_screenplay_dialogue_turns_become_directed_interactions(harbour) -> None:
    tables, text = harbour
    names = _names(tables)
    turns = [
        (names[r.subject_id], [names[o] for o in r.object_ids], r.interaction_type)
        for r in tables["interactions"].itertuples()
        if r.is_dialogue
    ]
    assert ("Nia Okafor", ["Ellis Crowe"], "inform") in turns  # vocative "Mr. Crowe,"
    assert ("Nia Okafor", ["Ellis Crowe"], "ask") in turns  # "Why not?"
    assert ("Ellis Crowe", ["Nia Okafor"], "answer") in turns  # reply to that question
    assert ("Margaret Hale", ["Tom Hale"], "request") in turns  # "Tom, listen. I need you to ..."
    assert ("Tom Hale", ["Margaret Hale"], "inform") in turns  # "(to Margaret)" parenthetical
    give = tables["interactions"][tables["interactions"]["interaction_type"] == "give"].iloc[0]
    assert (names[give.subject_id], [names[o] for o in give.object_ids]) == ("Margaret Hale", ["Tom Hale"])
    assert give.event_id in set(tables["events"]["event_id"]) and not give.is_dialogue
    _assert_grounded(tables, text)


def test_screenplay_events_and_scene_occasions(harbour) -> None:
    tables, _ = harbour
    names = _names(tables)
    events = tables["events"]
    departure = events[events["event_type"] == "departure"].iloc[0]
    assert departure.description == "Nia leaves the office."
    assert [names[p] for p in departure.participant_ids] == ["Nia Okafor"]
    assert names[departure.setting_id] == "HARBOUR OFFICE" and departure.time_cue == "night"
    scenes = tables["occasions"][tables["occasions"]["occasion_type"] == "scene"]
    assert len(scenes) == 2
    assert [sorted(names[p] for p in o.participant_ids) for o in scenes.itertuples()] == [
        ["Ellis Crowe", "Nia Okafor"],
        ["Margaret Hale", "Tom Hale"],
    ]
    assert [names[o.setting_id] for o in scenes.itertuples()] == ["HARBOUR OFFICE", "HARBOUR WALL"]
    linked = tables["interactions"]["occasion_id"]
    assert linked.notna().all() and set(linked) <= set(scenes["occasion_id"])


def test_chinese_scene(tmp_path: Path, hashing_settings) -> None:
    report, workspace, doc_id = build_one(SHOP_ZH, tmp_path / "ws", hashing_settings, facts=False)
    assert report.ok, report.summary()
    tables = frames(workspace, doc_id, *UNITS[:5])
    names = _names(tables)
    turns = {
        (names[r.subject_id], names[r.object_ids[0]], r.interaction_type)
        for r in tables["interactions"].itertuples()
    }
    assert {
        ("宾馆老板", "程勇", "ask"),
        ("程勇", "宾馆老板", "answer"),
        ("宾馆老板", "程勇", "warn"),
        ("程勇", "吕受益", "give"),
        ("程勇", "吕受益", "ask"),
    } <= turns
    assert {"arrival", "departure"} <= set(tables["events"]["event_type"])
    assert tables["occasions"]["description"].str.contains("王子神油店").any()
    _assert_grounded(tables, SHOP_ZH.read_text(encoding="utf-8"))
    _, again, _ = build_one(SHOP_ZH, tmp_path / "again", hashing_settings, facts=False)
    for table in ("events", "interactions", "occasions"):  # same input, same rows in the same order
        pd.testing.assert_frame_equal(tables[table], frames(again, doc_id, table)[table])


def test_prose_quotes_with_attribution(tmp_path: Path, hashing_settings) -> None:
    report, workspace, doc_id = build_one(FISHERMAN, tmp_path / "ws", hashing_settings, facts=False)
    assert report.ok, report.summary()
    tables = frames(workspace, doc_id, *UNITS[:5])
    names = _names(tables)
    turns = [
        (names[r.subject_id], names[r.object_ids[0]], r.interaction_type)
        for r in tables["interactions"].itertuples()
    ]
    assert turns[0] == ("fisherman", "wife", "inform")  # '"...," said the fisherman to his wife.'
    assert ("wife", "fisherman", "ask") in turns  # '"Did you ask it for anything?" asked the wife.'
    assert ("fisherman", "wife", "refuse") in turns  # '"No," said he.' : the other party of the exchange
    assert ("wife", "fisherman", "command") in turns  # '"Go back ...," she said.'
    events = tables["events"]
    assert "The fisherman let the flounder go and went home." in set(events["description"])
    assert not events["description"].str.startswith('"').any()  # attribution-only sentences are no events
    assert len(tables["occasions"]) == 1
    _assert_grounded(tables, FISHERMAN.read_text(encoding="utf-8"))


# -- the LLM path ------------------------------------------------------------------------------


def narrative_responder(body: dict[str, Any]) -> dict[str, Any] | None:
    """A plausible reply built from the prompt: the first known entities and the first sentence as
    evidence."""
    prompt = last_user_text(body.get("messages", []))
    if "Return the events, interactions and occasions" not in prompt:
        return None
    names = re.findall(r"^- (.+?) \((?:character)", prompt, re.MULTILINE)
    passage = prompt.split('"""')[1].strip()
    quote = next(line for line in passage.splitlines() if len(line.split()) >= 4)
    people = names[:2] + ["Nobody Known"]
    return {
        "events": [
            {
                "description": f"{people[0]} acts.",
                "event_type": "action",
                "participants": people,
                "setting": None,
                "time_cue": None,
                "evidence": quote,
            },
            {
                "description": "Something off the page.",
                "event_type": "other",
                "participants": [],
                "setting": None,
                "time_cue": None,
                "evidence": "words that are not in the passage",
            },
        ],
        "interactions": [
            {
                "subject": people[0],
                "objects": people[1:],
                "interaction_type": "warn",
                "description": f"{people[0]} warns someone.",
                "evidence": quote,
                "event_index": 0,
            }
        ],
        "occasions": [
            {"description": "The scene.", "occasion_type": "scene", "participants": people, "setting": None}
        ],
    }


def test_llm_path_fills_the_tables_and_quarantines_bad_chunks(tmp_path: Path, hashing_settings) -> None:
    with FakeOpenAIServer(model_names=("test-model",), responder=narrative_responder) as server:
        # Two chunks' first attempts fail; the client re-asks / retries once (max_retries=1 below)
        # and they fail again.
        server.queue_faults(
            "malformed_json", "length", "malformed_json", "length", "malformed_json", "length"
        )
        llm_settings = fast_llm_settings(server.url, max_retries=1, concurrency=1)
        client = OpenAICompatibleClient(llm_settings, cache=None)
        settings = hashing_settings.model_copy(
            update={
                "llm": llm_settings,
                "split_chunks": SMALL_CHUNKS,
                "extract_narrative": ONE_PER_CHUNK,
                "extract_graph": SEPARATE_PASSES,
            }
        )
        report, workspace, doc_id = build_one(HARBOUR, tmp_path / "ws", settings, llm=client, facts=False)
    # Items the LLM lost make the stage partial and the build not ok; no stage fails outright.
    assert not report.ok and report.count("partial") == 1 and report.count("failed") == 0, report.summary()
    tables = frames(workspace, doc_id, *UNITS)
    failed = set(tables["failures"]["item_id"])
    assert failed and failed <= set(tables["chunks"]["chunk_id"])
    assert all(json.loads(p)["status"] in ("invalid", "truncated") for p in tables["failures"]["payload"])
    ok_chunks = set(tables["chunks"]["chunk_id"]) - failed
    assert ok_chunks, "at least one chunk must succeed"
    assert set(tables["events"]["chunk_id"]) == ok_chunks  # no units at all from a failed chunk
    assert (tables["events"]["method"] == "llm").all()
    assert tables["events"]["participant_ids"].map(len).max() >= 1  # names resolved; "Nobody Known" dropped
    located = tables["events"][tables["events"]["description"] != "Something off the page."]
    assert (located["char_end"] - located["char_start"] < 200).all()  # quote found, not the whole chunk
    fallback = tables["events"][tables["events"]["description"] == "Something off the page."].iloc[0]
    chunk = tables["chunks"].set_index("chunk_id").loc[fallback.chunk_id]
    assert (fallback.char_start, fallback.char_end) == (chunk.char_start, chunk.char_end)
    assert tables["interactions"]["event_id"].isin(tables["events"]["event_id"]).all()
    assert len(tables["occasions"]) >= 1 and set(tables["llm_calls"]["stage"]) == {"extract_narrative"}
    _assert_grounded(tables, HARBOUR.read_text(encoding="utf-8"), names_in_span=False)


def every_line_responder(body: dict[str, Any]) -> dict[str, Any] | None:
    """One event per passage line of four words or more, quoting it; one scene occasion per heading."""
    prompt = last_user_text(body.get("messages", []))
    if "Return the events, interactions and occasions" not in prompt:
        return None
    passage = prompt.split('"""')[1].strip()
    names = re.findall(r"^- (.+?) \((?:character)", prompt, re.MULTILINE)
    lines = [line.strip() for line in passage.splitlines() if len(line.split()) >= 4][:40]
    events = [
        {
            "description": f"Line {i}.",
            "event_type": "action",
            "participants": [n for n in names if n.split()[0].casefold() in line.casefold()][:3],
            "setting": None,
            "time_cue": None,
            "evidence": line,
        }
        for i, line in enumerate(lines)
    ]
    interactions = (
        [
            {
                "subject": names[0],
                "objects": names[1:2],
                "interaction_type": "inform",
                "description": f"{names[0]} speaks.",
                "evidence": lines[-1],
                "event_index": len(lines) - 1,
            }
        ]
        if len(names) >= 2 and lines
        else []
    )
    return {"events": events, "interactions": interactions, "occasions": []}


def test_packed_requests_keep_units_in_their_own_chunk(tmp_path: Path, hashing_settings) -> None:
    """Several chunks share one request; every unit lands in the chunk holding its evidence, and a
    failed pack lists every chunk it lost."""
    with FakeOpenAIServer(model_names=("test-model",), responder=every_line_responder) as server:
        llm_settings = fast_llm_settings(server.url, max_retries=0, concurrency=1, max_tokens=4000)
        settings = hashing_settings.model_copy(
            update={
                "llm": llm_settings,
                "split_chunks": SMALL_CHUNKS,
                "extract_narrative": ExtractNarrativeSettings(pack_tokens=120),
                "extract_graph": SEPARATE_PASSES,
            }
        )
        with OpenAICompatibleClient(llm_settings, cache=None) as client:
            report, workspace, doc_id = build_one(HARBOUR, tmp_path / "ws", settings, llm=client, facts=False)
        assert report.ok, report.summary()
        tables = frames(workspace, doc_id, *UNITS)
        n_chunks, n_calls = len(tables["chunks"]), len(tables["llm_calls"])
        assert 1 < n_calls < n_chunks  # packed: fewer requests than chunks, more than one pack
        assert tables["failures"].empty
        assert tables["events"]["chunk_id"].nunique() >= 3  # spread over the chunks, not the pack's first
        text = HARBOUR.read_text(encoding="utf-8")
        for row in tables["events"].itertuples():  # each quote located in its own chunk, never the whole
            assert text[row.char_start : row.char_end].split()[:2] == row.evidence.split()[:2]
        assert tables["interactions"]["event_id"].isin(tables["events"]["event_id"]).all()
        _assert_grounded(tables, text, names_in_span=False)

        server.queue_faults("malformed_json", "malformed_json")  # the first pack fails (asked and re-asked)
        with OpenAICompatibleClient(llm_settings, cache=None) as client:
            report, workspace, doc_id = build_one(
                HARBOUR, tmp_path / "ws2", settings, llm=client, facts=False
            )
    tables = frames(workspace, doc_id, *UNITS)
    lost = set(tables["failures"]["item_id"])
    ordered = tables["chunks"].sort_values("char_start")["chunk_id"].tolist()
    assert len(lost) >= 2 and lost == set(ordered[: len(lost)])  # exactly the first pack's chunks
    assert not lost & set(tables["events"]["chunk_id"])
    assert set(tables["events"]["chunk_id"]) == set(ordered) - lost


@pytest.mark.parametrize(
    "prompt_id, values",
    [
        ("extract_narrative/v1", {"heading": "H", "entities": "- A (character)", "text": "T"}),
        ("extract_narrative/v2", {"heading": "H", "entities": "- A (character)", "text": "T"}),
        (
            "extract_facts/v1",
            {
                "name": "A",
                "entity_type": "character",
                "aliases": "-",
                "description": "-",
                "excerpts": "[1] (H)\nT",
            },
        ),
    ],
)
def test_prompts_render_in_both_languages(prompt_id: str, values: dict[str, str]) -> None:
    for language in ("en", "zh"):
        prompt = load_prompt(prompt_id, language)
        assert prompt.language == language
        messages = render_messages(prompt, values)
        assert [m["role"] for m in messages] == ["system", "user"] and "{{" not in messages[1]["content"]
