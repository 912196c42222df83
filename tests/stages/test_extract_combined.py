"""The combined extraction (`[extract_graph] combined`, the LLM default): one request per pack of
chunks returns entities, relations, units and facts; the reply is split back per chunk;
extract_narrative and extract_facts resolve the stored units without a request of their own;
failed packs list every chunk they lost; offline builds are unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from flows.build.corpus import build, make_resources
from flows.build.dry_run import dry_run
from flows.stages import select_stages
from schemas.config import Settings, load_settings
from schemas.responses.combined import ITEM_REPLY_TOKENS, LISTS, CombinedExtraction, PassageFact
from tasks.graph import combined
from tasks.graph.combined import (
    FILLED_HEADROOM,
    REST_TAG,
    rest_model_and_limit,
    unfinished_lists,
    reached_facts,
    split_combined,
    split_facts,
    unit_rows,
    without_repeats,
)
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.chunk_packs import Member, Pack, pack_chunks
from tasks.llm.requests.items import LLMBatch
from tasks.llm.requests.shapes import COMBINED_REPLY_FRAME_TOKENS
from tasks.narrative.combined import stored_replies
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

PACK_TOKENS = 600  # several packs from the sample screenplay
TABLES = ("chunks", "raw_units", "entities", "events", "interactions", "occasions", "atomic_facts")


def _settings(**graph: Any) -> Settings:
    return load_settings(
        overrides={
            "embed_texts": {"backend": "hashing"},
            "extract_graph": {"combined_pack_tokens": PACK_TOKENS, **graph},
        }
    )


def _build(root: Path, settings: Settings, server: FakeOpenAIServer | None = None, **llm: Any):
    """Build the sample screenplay through extract_facts; returns (report, tables)."""
    workspace = Workspace.at(root)
    client = None
    if server is not None:
        settings = settings.model_copy(update={"llm": fast_llm_settings(server.url, **llm)})
        client = OpenAICompatibleClient(settings.llm, cache=None, sleep=lambda _s: None)
    try:
        report = build(
            [str(SCREENPLAY)],
            workspace,
            settings,
            stages=select_stages(until="extract_facts"),
            resources=make_resources(settings, llm=client),
            quiet=True,
        )
    finally:
        if client is not None:
            client.close()
    names = (*TABLES, "failures", "llm_calls", "entity_profiles")
    return report, {name: read_frame(workspace, name) for name in names}


def _outcome(report, stage: str):
    return next(o for d in report.documents for o in d.outcomes if o.stage == stage)


def _reply(**parts: list[dict[str, Any]]) -> CombinedExtraction:
    empty = {k: [] for k in CombinedExtraction.model_fields}
    return CombinedExtraction.model_validate({**empty, **parts})


def test_a_packed_reply_is_split_back_per_chunk_by_evidence_and_names() -> None:
    members = (
        Member("c1", 0, "ANNA opens the door. Ben waits outside."),
        Member("c2", 40, "Ben hands her the brass key. Anna smiles."),
    )
    event = {
        "description": "Ben gives Anna the key.",
        "event_type": "action",
        "participants": ["Ben", "Anna"],
        "setting": None,
        "time_cue": None,
        "evidence": "Ben hands her the brass key.",
    }
    interaction = {
        "subject": "Ben",
        "objects": ["Anna"],
        "interaction_type": "give",
        "description": "Ben gives Anna the key.",
        "evidence": "Ben hands her the brass key.",
        "event_index": 0,
    }
    fact_here = {"entity": "Anna", "text": "Anna opens the door.", "fact_type": "action", "related": []}
    reply = _reply(
        entities=[
            {"name": "Anna", "type": "character", "description": "A woman.", "aliases": []},
            {"name": "Ben", "type": "character", "description": "A man.", "aliases": []},
        ],
        relations=[
            {
                "source": "Ben",
                "target": "Anna",
                "description": "Ben gives Anna the key.",
                "keywords": ["key"],
                "strength": 6,
            }
        ],
        events=[event],
        interactions=[interaction],
        facts=[
            {**fact_here, "evidence": "ANNA opens the door."},
            {
                "entity": "Ben",
                "text": "Ben smiles.",
                "fact_type": "state",
                "related": [],
                "evidence": "nowhere",
            },
        ],
        states=[
            {"character": "Anna", "state": "smiles", "kind": "expression", "evidence": "Anna smiles."},
            {"character": "Ben", "state": "waits", "kind": "posture", "evidence": "not a quote"},
        ],
    )
    graph, per_chunk = split_combined(reply, members, "en")
    assert len(graph.entities) == 2 and len(graph.relations) == 1  # split later with the graph replies
    (units1, facts1, states1), (units2, facts2, states2) = per_chunk
    # states placed as facts are: by their quote, else the first chunk naming the character
    assert [s.character for s in states1] == ["Ben"] and [s.character for s in states2] == ["Anna"]
    assert units1.events == [] and [e.evidence for e in units2.events] == [event["evidence"]]
    assert units2.interactions[0].event_index == 0  # renumbered within its chunk
    assert [f.entity for f in facts1] == ["Anna", "Ben"]  # evidence in c1; unlocated: first chunk naming Ben
    assert facts2 == []
    rows = unit_rows("doc", "c2", units2, facts2, states2)
    assert {(r["kind"], r["position"]) for r in rows} == {("event", 0), ("interaction", 0), ("state", 0)}
    assert (
        json.loads(next(r for r in rows if r["kind"] == "event")["payload"])["evidence"] == event["evidence"]
    )


def test_split_facts_falls_back_to_the_chunk_naming_the_entity_then_the_first() -> None:
    fact = PassageFact(
        entity="Zed", text="Zed is absent.", fact_type="state", related=[], evidence="no quote"
    )
    assert [len(part) for part in split_facts([fact], (Member("a", 0, "x y"), Member("b", 3, "z")))] == [1, 0]
    zh = PassageFact(
        entity="程勇", text="程勇交不出房租。", fact_type="state", related=[], evidence="不在文中"
    )
    members = (Member("a", 0, "宾馆老板：房租赶紧付吧。"), Member("b", 12, "程勇看着车走远。"))
    assert [len(part) for part in split_facts([zh], members, "zh")] == [0, 1]


def test_an_unreadable_stored_unit_is_a_failures_row_not_a_crash() -> None:
    rows = pd.DataFrame(
        [
            {"raw_unit_id": "u1", "chunk_id": "c1", "kind": "event", "position": 0, "payload": "{broken"},
            {
                "raw_unit_id": "u2",
                "chunk_id": "c1",
                "kind": "occasion",
                "position": 0,
                "payload": json.dumps(
                    {"description": "A scene.", "occasion_type": "scene", "participants": [], "setting": None}
                ),
            },
        ]
    )
    replies, failures = stored_replies(rows, "doc", "extract_narrative")
    assert [f["item_id"] for f in failures] == ["u1"] and failures[0]["stage"] == "extract_narrative"
    assert len(replies["c1"].occasions) == 1 and replies["c1"].events == []


@pytest.fixture(scope="module")
def combined_build(tmp_path_factory):
    root = tmp_path_factory.mktemp("combined")
    with FakeOpenAIServer(model_names=("test-model",), responder=pipeline_responder) as server:
        report, tables = _build(root / "ws", _settings(), server, concurrency=4)
        requests = [r for r in server.chat_requests()]
    return report, tables, requests


def test_one_request_per_pack_fills_every_construction_table(combined_build) -> None:
    report, tables, requests = combined_build
    assert report.ok, report.summary()
    calls = tables["llm_calls"]
    chunks = tables["chunks"].sort_values("ordinal")
    packs = pack_chunks(list(chunks.itertuples()), "", PACK_TOKENS)
    assert 1 < len(packs) < len(chunks)
    # canonicalize may ask about open pairs; narrative and facts ask nothing
    assert set(calls["stage"]) <= {"extract_graph", "canonicalize_entities"}
    assert (calls["stage"] == "extract_graph").sum() == len(packs)
    assert set(calls.loc[calls["stage"] == "extract_graph", "prompt_id"]) == {"extract_graph/v4"}
    units = tables["raw_units"]
    assert set(units["kind"]) == {"event", "interaction", "occasion", "fact", "state"}
    assert set(units["chunk_id"]) <= set(chunks["chunk_id"])
    for table in ("events", "interactions", "occasions", "atomic_facts"):
        assert len(tables[table]) > 0, table
        assert (tables[table]["method"] == "llm").all(), table
    entities = tables["entities"].set_index("entity_id")
    facts = tables["atomic_facts"]
    assert facts["entity_id"].isin(entities.index).all()
    assert (entities.loc[facts["entity_id"], "degree"].to_numpy() >= 2).all()  # profiled entities only
    spans = chunks.set_index("chunk_id")
    for row in facts.itertuples():  # located inside its own chunk
        chunk = spans.loc[row.chunk_id]
        assert chunk.char_start <= row.char_start <= row.char_end <= chunk.char_end
    assert set(tables["entity_profiles"]["method"]) == {"llm:facts+rules"}
    assert tables["events"]["participant_ids"].map(len).max() >= 1  # names resolved to canonical ids


def test_unresolvable_names_are_left_out_and_counted(tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> Any:
        answer = pipeline_responder(body)
        if '"CombinedExtraction"' not in json.dumps(body.get("response_format")):
            return answer
        reply = json.loads(answer)
        ghost = {
            "entity": "Nobody Known",
            "text": "Nobody Known waits.",
            "fact_type": "state",
            "related": [],
            "evidence": "Nobody Known waits.",
        }
        reply["facts"].append(ghost)
        for event in reply["events"]:
            event["participants"].append("Nobody Known")
        return json.dumps(reply)

    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        report, tables = _build(tmp_path / "ws", _settings(), server, concurrency=4)
    assert report.ok, report.summary()
    narrative, facts = _outcome(report, "extract_narrative"), _outcome(report, "extract_facts")
    assert any("matched no entity" in w for w in narrative.warnings)
    assert any("named no known entity" in w for w in facts.warnings)
    assert not tables["atomic_facts"]["text"].str.contains("Nobody Known").any()
    assert len(tables["events"]) > 0


def _lists_held_empty(body: dict[str, Any]) -> list[str]:
    if body["response_format"]["json_schema"]["name"] != "CombinedExtraction":
        return []
    properties = body["response_format"]["json_schema"]["schema"]["properties"]
    return [name for name in LISTS if properties[name].get("maxItems") == 0]


def test_a_pack_cut_before_its_facts_is_asked_for_the_rest_in_the_same_words(tmp_path: Path) -> None:
    with FakeOpenAIServer(model_names=("test-model",), responder=pipeline_responder) as server:
        # The first pack is cut at its limit (no larger one is allowed: max_tokens_retry is lower);
        # the fake cuts mid-reply, so the salvage holds the first lists and no fact.
        server.queue_faults("length")
        report, tables = _build(tmp_path / "ws", _settings(), server, concurrency=1, max_retries=1)
        bodies = [r.body for r in server.chat_requests()]
    assert report.ok, report.summary()
    chunks = tables["chunks"].sort_values("ordinal")
    first = pack_chunks(list(chunks.itertuples()), "", PACK_TOKENS)[0]
    calls = tables["llm_calls"]
    graph = calls[calls["stage"] == "extract_graph"]
    assert graph["status"].isin(["truncated", "salvaged"]).sum() == 1
    rest = graph[graph["item_id"].str.endswith(REST_TAG)]
    assert list(rest["item_id"]) == [f"{first.item_id}{REST_TAG}"] and (rest["status"] == "ok").all()
    assert not graph["item_id"].str.endswith("#alone").any()  # no chunk read a second time
    # The same words as the cut request (so a server reads them from its prefix cache), and a schema
    # in which only the lists the cut reply never reached are free.
    asked = [b for b in bodies if b["response_format"]["json_schema"]["name"] == "CombinedExtraction"]
    cut, again = asked[0], next(b for b in asked if _lists_held_empty(b))
    assert again["messages"] == cut["messages"]
    held = _lists_held_empty(again)
    assert held == list(LISTS[: len(held)]) and "facts" not in held and "states" not in held
    units = tables["raw_units"]
    mine = units[units["chunk_id"].isin([m.chunk_id for m in first.members])]
    assert "fact" in set(mine["kind"])  # the rest's facts are the pack's
    assert tables["failures"].empty or not (tables["failures"]["stage"] == "extract_graph").any()


def test_the_rest_of_a_cut_reply_starts_after_its_last_written_list_and_is_sized_for_those_lists() -> None:
    written = {"entities": ["Tom"], "events": ["Tom climbs."]}  # only which lists hold items matters
    reply = CombinedExtraction.model_construct(**{name: written.get(name, []) for name in LISTS})
    rest = unfinished_lists(reply)
    assert rest == ("interactions", "occasions", "facts", "states")  # events was being written
    caps = {
        "entities": 3,
        "relations": 2,
        "events": 2,
        "interactions": 1,
        "occasions": 1,
        "facts": 2,
        "states": 2,
    }
    model, limit = rest_model_and_limit(caps, 600, rest)
    properties = model.model_json_schema()["properties"]
    assert [properties[name]["maxItems"] for name in LISTS] == [0, 0, 0, 1, 1, 2, 2]
    filled = sum(ITEM_REPLY_TOKENS[name] * caps[name] for name in rest)
    assert limit == COMBINED_REPLY_FRAME_TOKENS + int(FILLED_HEADROOM * filled)


def _which_lists(**lists: list[Any]) -> CombinedExtraction:
    # Only which lists hold items matters to the rounds; the items need not be valid.
    return CombinedExtraction.model_construct(**{name: lists.get(name, []) for name in LISTS})


def _scripted_rest(monkeypatch: pytest.MonkeyPatch, answers: list[tuple[CombinedExtraction, str]]):
    """Replace the rest requests' run_structured with `answers` in order (reply, llm_calls status);
    returns the log of what each request asked: (item id, the lists free in its schema)."""
    asked: list[tuple[str, tuple[str, ...]]] = []

    def run_structured(ctx, prompt_id, items, model, max_tokens=None, fields_from=None):
        properties = model.model_json_schema()["properties"]
        free = tuple(name for name in LISTS if properties[name].get("maxItems") != 0)
        batch: LLMBatch[CombinedExtraction] = LLMBatch()
        for item_id, _values in items:
            asked.append((item_id, free))
            reply, status = answers.pop(0)
            batch.values[item_id] = reply
            batch.calls.append({"item_id": item_id, "status": status})
        return batch

    monkeypatch.setattr(combined, "run_structured", run_structured)
    return asked


CAPS = dict(zip(LISTS, (3, 2, 2, 1, 1, 2, 2)))  # entities, relations, events, interactions, occasions…


def _ask(packs: list[Pack], batch: LLMBatch[CombinedExtraction]):
    return combined._ask_for_the_rest(
        None, packs, lambda _p: {}, batch, CAPS, 600, combined.capped_extraction(CAPS)
    )  # fmt: skip


def test_a_rest_cut_before_the_facts_is_asked_for_what_it_left_while_each_round_moves_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A model looping in the interactions of its rest is asked once more, for the lists after them.
    asked = _scripted_rest(
        monkeypatch,
        [
            (_which_lists(events=["e"], interactions=["i"]), "salvaged"),
            (_which_lists(facts=["f"], states=["s"]), "ok"),
        ],
    )
    pack = Pack("c1", 0, "", (Member("c1", 0, ""),))
    batch = LLMBatch(
        values={"c1": _which_lists(entities=["Tom"], relations=["r"])},
        calls=[{"item_id": "c1", "status": "salvaged"}],
    )
    kept, completed = _ask([pack], batch)
    assert asked == [
        (f"c1{REST_TAG}", ("events", "interactions", "occasions", "facts", "states")),
        (f"c1{REST_TAG}2", ("occasions", "facts", "states")),
    ]
    merged = kept.values["c1"]
    assert [getattr(merged, name) for name in ("entities", "events", "interactions", "facts")] == [
        ["Tom"], ["e"], ["i"], ["f"],
    ]  # fmt: skip
    assert completed == {"c1"} and [row["item_id"] for row in kept.calls][1:] == [i for i, _ in asked]


def test_a_rest_that_moves_no_further_is_not_asked_again_and_its_pack_is_not_completed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Cut again before writing an item: the same lists would be asked for, so the pack is left to be
    # read chunk by chunk. A pack cut in its facts is not asked for any rest.
    asked = _scripted_rest(monkeypatch, [(_which_lists(), "salvaged")])
    packs = [Pack(c, 0, "", (Member(c, 0, ""),)) for c in ("c1", "c2")]
    batch = LLMBatch(
        values={"c1": _which_lists(entities=["Tom"]), "c2": _which_lists(entities=["Ann"], facts=["f"])},
        calls=[{"item_id": "c1", "status": "salvaged"}, {"item_id": "c2", "status": "salvaged"}],
    )
    kept, completed = _ask(packs, batch)
    assert [item for item, _ in asked] == [f"c1{REST_TAG}"] and completed == set()
    assert not reached_facts(kept.values["c1"]) and kept.values["c2"].facts == ["f"]


def test_a_cut_pack_whose_rest_is_not_answered_is_asked_again_one_chunk_at_a_time(tmp_path: Path) -> None:
    def responder(body: dict[str, Any]) -> Any:
        if body.get("response_format") and _lists_held_empty(body):
            return "not json"  # the request for the rest, and its re-ask
        return pipeline_responder(body)

    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        server.queue_faults("length")
        report, tables = _build(tmp_path / "ws", _settings(), server, concurrency=1, max_retries=1)
    assert report.ok, report.summary()
    chunks = tables["chunks"].sort_values("ordinal")
    first = pack_chunks(list(chunks.itertuples()), "", PACK_TOKENS)[0]
    assert len(first.members) > 1
    calls = tables["llm_calls"]
    graph = calls[calls["stage"] == "extract_graph"]
    assert (graph["item_id"] == f"{first.item_id}{REST_TAG}").any()
    # A pack's salvage holds its first chunks only: every chunk is asked alone.
    alone = graph[graph["item_id"].str.endswith("#alone")]
    assert sorted(alone["item_id"]) == sorted(f"{m.chunk_id}#alone" for m in first.members)
    assert (alone["status"] == "ok").all()
    assert tables["failures"].empty or not (tables["failures"]["stage"] == "extract_graph").any()
    assert {m.chunk_id for m in first.members} <= set(tables["raw_units"]["chunk_id"])


def test_a_failed_pack_lists_every_chunk_it_lost(tmp_path: Path) -> None:
    with FakeOpenAIServer(model_names=("test-model",), responder=pipeline_responder) as server:
        # the first pack: malformed, and malformed again when asked again
        server.queue_faults("malformed_json", "malformed_json")
        report, tables = _build(tmp_path / "ws", _settings(), server, concurrency=1, max_retries=1)
    chunks = tables["chunks"].sort_values("ordinal")
    packs = pack_chunks(list(chunks.itertuples()), "", PACK_TOKENS)
    failures = tables["failures"]
    lost = set(failures.loc[failures["stage"] == "extract_graph", "item_id"])
    # Which requests the queued faults meet depends on the client's retry and split order; whatever
    # they hit, a lost request lists every chunk it carried, and at least one carried several.
    hit = [p for p in packs if {m.chunk_id for m in p.members} & lost]
    assert hit and lost == {m.chunk_id for p in hit for m in p.members}
    assert any(len(p.members) > 1 for p in hit) and len(hit) < len(packs)
    assert not set(tables["raw_units"]["chunk_id"]) & lost  # nothing stored for lost chunks
    assert not set(tables["events"]["chunk_id"]) & lost
    assert len(tables["events"]) > 0  # the other packs carry on
    assert _outcome(report, "extract_graph").warnings


def test_offline_builds_are_the_same_with_and_without_the_combined_setting(tmp_path: Path) -> None:
    _, combined = _build(tmp_path / "a", _settings())
    _, separate = _build(tmp_path / "b", _settings(combined=False))
    assert combined["raw_units"].empty and separate["raw_units"].empty
    for table in ("events", "interactions", "occasions", "atomic_facts", "entity_profiles"):
        assert len(combined[table]) > 0, table
        pd.testing.assert_frame_equal(combined[table], separate[table])
        assert not combined[table]["method"].astype(str).str.startswith("llm").any()


def test_dry_run_counts_one_combined_request_per_pack_and_none_for_narrative_and_facts() -> None:
    settings = _settings().model_copy(update={"llm": fast_llm_settings("http://127.0.0.1:9")})
    report = dry_run([str(SCREENPLAY)], select_stages(until="extract_facts"), settings)
    rows = {row["stage"]: row for row in report["stages"]}
    assert rows["extract_narrative"]["calls"] == 0 and rows["extract_facts"]["calls"] == 0
    assert rows["extract_graph"]["calls"] == report["corpus"]["graph_requests"] > 1
    assert rows["extract_graph"]["prompt_tokens"] > report["corpus"]["chunk_tokens"]


def test_list_caps_reach_the_schema_the_prompt_and_the_reply_limit(tmp_path: Path) -> None:
    caps = {"entities": 3, "relations": 2, "events": 2, "interactions": 1, "occasions": 1, "facts": 2}
    with FakeOpenAIServer(model_names=("test-model",), responder=pipeline_responder) as server:
        report, tables = _build(tmp_path / "ws", _settings(max_items=caps), server, concurrency=4)
        requests = [r.body for r in server.chat_requests()]
    assert report.ok, report.summary()
    combined = [b for b in requests if b["response_format"]["json_schema"]["name"] == "CombinedExtraction"]
    assert combined
    for body in combined:
        properties = body["response_format"]["json_schema"]["schema"]["properties"]
        assert {name: properties[name]["maxItems"] for name in caps} == caps
        # a model filling every list to its cap ends inside the limit, not cut in the first lists
        filled = sum(ITEM_REPLY_TOKENS[name] * cap for name, cap in caps.items())
        assert body["max_completion_tokens"] >= FILLED_HEADROOM * filled  # with room for long quotes
        prompt = "\n".join(m["content"] for m in body["messages"])
        assert "events: list (≤2)" in prompt  # the model reads the caps with the fields
    assert len(tables["events"]) > 0


def test_list_caps_name_only_lists_of_the_reply() -> None:
    with pytest.raises(ValueError, match="max_items names no list of the reply: evnts"):
        load_settings(overrides={"extract_graph": {"max_items": {"evnts": 3}}})


def test_an_item_repeated_with_a_side_field_changed_is_kept_once() -> None:
    event = {
        "description": "Rosa tears the ticket.",
        "event_type": "action",
        "participants": ["Rosa"],
        "setting": None,
        "time_cue": "DAY",
        "evidence": "Rosa tears the ticket.",
    }
    interaction = {
        "subject": "Rosa",
        "objects": ["Tomas"],
        "interaction_type": "inform",
        "description": "Rosa refuses.",
        "evidence": "No.",
    }
    reply = _reply(
        events=[event, {**event, "time_cue": "NIGHT"}, {**event, "description": "Tomas leaves."}],
        interactions=[{**interaction, "event_index": 2}, {**interaction, "event_index": 1}],
    )
    cleaned = without_repeats(reply)
    assert [e.description for e in cleaned.events] == ["Rosa tears the ticket.", "Tomas leaves."]
    assert [i.event_index for i in cleaned.interactions] == [1]  # still "Tomas leaves."


def test_a_reply_cut_in_its_facts_is_kept_and_one_cut_before_them_is_not() -> None:
    entity = {"name": "Anna", "type": "character", "description": "A woman.", "aliases": []}
    fact = {"entity": "Anna", "text": "Anna waits.", "fact_type": "state", "related": [], "evidence": "x"}
    state = {"character": "Anna", "state": "waits", "kind": "posture", "evidence": "Anna waits."}
    # its entities, relations and units were finished before the cut: nothing to ask again
    assert reached_facts(_reply(entities=[entity], facts=[fact]))
    assert reached_facts(_reply(entities=[entity], states=[state]))
    # cut before any fact: its later chunks may have no units at all
    assert not reached_facts(_reply(entities=[entity]))
    assert not reached_facts(None)
