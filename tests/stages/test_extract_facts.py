"""extract_facts: typed single-entity facts grounded in spans that name the entity, attributes
from intro lines and kinship words, profiles, the degree threshold, the attributes switch
("w/o attributes" ablation) and the LLM path with a failing entity."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from schemas.config import ExtractFactsSettings, ExtractGraphSettings, load_settings
from tasks.facts.heuristics import fact_type
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.narrative.builders import FISHERMAN, HARBOUR, SHOP_ZH, build_one, frames
from tests.fixtures.openai_server import FakeOpenAIServer, last_user_text

TABLES = (
    "entities",
    "chunks",
    "atomic_facts",
    "entity_attributes",
    "entity_profiles",
    "failures",
    "llm_calls",
)


@pytest.mark.parametrize(
    "text, language, expected",
    [
        ("She wants to keep the light burning.", "en", "goal"),
        ("He is afraid of the storm.", "en", "mental_state"),
        ("The sale falls through because the boats stay home.", "en", "cause"),
        ("Tom puts his arm around his sister.", "en", "relation"),
        ("MARGARET HALE (60s) polishes the rail.", "en", "attribute"),
        ("Ellis is at his desk.", "en", "state"),
        ("Tom drives the coast road.", "en", "action"),
        ("程勇打算去印度。", "zh", "goal"),
        ("程勇一脸无奈。", "zh", "mental_state"),
    ],
)
def test_fact_type_cues(text: str, language: str, expected: str) -> None:
    assert fact_type(text, language) == expected


def _settings(**facts: Any):
    return load_settings(overrides={"embed_texts": {"backend": "hashing"}, "extract_facts": facts})


def _build(path: Path, tmp: Path, settings=None, llm=None, lost: bool = False) -> dict[str, pd.DataFrame]:
    """Build `path`; with `lost`, the LLM lost items on purpose: the stage is partial, never failed."""
    report, workspace, doc_id = build_one(path, tmp / "ws", settings or _settings(), llm=llm)
    if lost:
        assert not report.ok and report.count("partial") == 1, report.summary()
        assert report.count("failed") == 0
    else:
        assert report.ok, report.summary()
    return frames(workspace, doc_id, *TABLES)


def _attributes(tables: dict[str, pd.DataFrame]) -> dict[tuple[str, str], str]:
    names = dict(zip(tables["entities"]["entity_id"], tables["entities"]["name"]))
    return {(names[r.entity_id], r.key): r.value for r in tables["entity_attributes"].itertuples()}


def _assert_spans_name_their_entity(tables: dict[str, pd.DataFrame], text: str) -> None:
    chunks = tables["chunks"].set_index("chunk_id")
    entities = tables["entities"].set_index("entity_id")
    for fact in tables["atomic_facts"].itertuples():
        chunk = chunks.loc[fact.chunk_id]
        assert chunk.char_start <= fact.char_start < fact.char_end <= chunk.char_end
        assert chunk.section_id == fact.section_id
        entity = entities.loc[fact.entity_id]
        surfaces = [entity["name"], *entity["aliases"], *entity["name"].split()]
        assert re.search(
            "|".join(re.escape(s) for s in surfaces), text[fact.char_start : fact.char_end], re.IGNORECASE
        ), fact.text


@pytest.fixture(scope="module")
def harbour(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pd.DataFrame]:
    return _build(HARBOUR, tmp_path_factory.mktemp("facts"))


def test_screenplay_facts_attributes_and_profiles(harbour: dict[str, pd.DataFrame]) -> None:
    tables = harbour
    names = dict(zip(tables["entities"]["entity_id"], tables["entities"]["name"]))
    facts = tables["atomic_facts"]
    characters = {"Ellis Crowe", "Nia Okafor", "Tom Hale", "Margaret Hale"}
    assert characters <= {names[e] for e in facts["entity_id"]}
    spoken = facts[facts["text"].str.startswith("Margaret Hale says:")]
    assert set(spoken["fact_type"]) >= {"goal"}  # "I need you to keep this key for me."
    assert facts.groupby("entity_id")["text"].apply(lambda t: t.str.lower().is_unique).all()
    attributes = _attributes(tables)
    assert attributes[("Ellis Crowe", "age")] == "50s"
    assert attributes[("Ellis Crowe", "role")] == "the harbour master"
    assert attributes[("Nia Okafor", "role")] == "his assistant"
    assert attributes[("Tom Hale", "occupation")] == "fisherman"
    fact_ids = set(facts["fact_id"])
    assert all(set(ids) <= fact_ids for ids in tables["entity_attributes"]["fact_ids"])
    profiles = tables["entity_profiles"].set_index("entity_id")
    assert set(profiles.index) == set(facts["entity_id"])
    ellis = profiles.loc[next(e for e, n in names.items() if n == "Ellis Crowe")]
    assert ellis.summary.startswith("Ellis Crowe (50s), the harbour master.") and ellis.n_facts >= 2
    _assert_spans_name_their_entity(tables, HARBOUR.read_text(encoding="utf-8"))


def test_degree_threshold_limits_profiled_entities(tmp_path: Path, harbour: dict[str, pd.DataFrame]) -> None:
    entities = harbour["entities"].set_index("entity_id")
    degree = entities["degree"]
    characters = entities[(entities["entity_type"] == "character") & (degree >= 2)].index
    assert set(harbour["entity_profiles"]["entity_id"]) == set(characters)  # the default threshold, 2
    tables = _build(HARBOUR, tmp_path, _settings(min_degree=3))
    assert degree.max() == 2 and len(tables["entities"]) == len(degree)
    assert [len(tables[t]) for t in ("atomic_facts", "entity_attributes", "entity_profiles")] == [0, 0, 0]


def test_prose_and_chinese_facts(tmp_path: Path) -> None:
    prose = _build(FISHERMAN, tmp_path / "prose")
    names = dict(zip(prose["entities"]["entity_id"], prose["entities"]["name"]))
    assert {names[e] for e in prose["atomic_facts"]["entity_id"]} == {"fisherman", "wife", "flounder"}
    assert _attributes(prose)[("fisherman", "relationship_to_wife")] == "wife"  # "lived with his wife"
    _assert_spans_name_their_entity(prose, FISHERMAN.read_text(encoding="utf-8"))
    chinese = _build(SHOP_ZH, tmp_path / "zh")
    assert _attributes(chinese)[("宾馆老板", "occupation")] == "老板"
    texts = set(chinese["atomic_facts"]["text"])
    assert "程勇说：“你明天还来吗？”" in texts and "程勇坐在店里抽烟，一脸无奈。" in texts
    assert chinese["entity_profiles"]["summary"].str.contains("出现在").all()
    _assert_spans_name_their_entity(chinese, SHOP_ZH.read_text(encoding="utf-8"))


def test_switch_off_writes_the_three_tables_empty(tmp_path: Path) -> None:
    report, workspace, doc_id = build_one(HARBOUR, tmp_path / "ws", _settings(enabled=False))
    assert report.ok, report.summary()
    outcome = next(o for o in report.documents[0].outcomes if o.stage == "extract_facts")
    assert outcome.status == "built"
    tables = frames(workspace, doc_id, "atomic_facts", "entity_attributes", "entity_profiles", "events")
    assert [len(tables[t]) for t in ("atomic_facts", "entity_attributes", "entity_profiles")] == [0, 0, 0]
    assert len(tables["events"]) > 0  # only the fact tables are ablated
    assert ExtractFactsSettings().enabled is True


ENTITY_LINE = re.compile(r"^(\d+)\. (.+?) \((\w+)\);.*; excerpts: ([\d, ]+)$", re.MULTILINE)


def requested_entities(prompt: str) -> list[tuple[int, str, list[int]]]:
    """(number, name, cited excerpt numbers) of each entity a batched facts prompt lists."""
    return [
        (int(n), name, [int(x) for x in cited.split(",")])
        for n, name, _, cited in ENTITY_LINE.findall(prompt)
    ]


def excerpt_texts(prompt: str) -> dict[int, str]:
    parts = re.split(r"^\[(\d+)\] \(.*\)$", prompt.split("Excerpts:", 1)[1], flags=re.MULTILINE)
    return {int(n): body for n, body in zip(parts[1::2], parts[2::2])}


def entity_answer(number: int, name: str, cited: list[int], excerpts: dict[int, str]) -> dict[str, Any]:
    first = name.split()[0].upper()
    where, quote = next(
        (k, line) for k in cited for line in excerpts[k].splitlines() if first in line.upper()
    )
    return {
        "number": number,
        "facts": [
            {
                "text": f"{name} appears here.",
                "fact_type": "state",
                "related": ["Nobody Known"],
                "excerpt": where,
                "evidence": quote,
            },
            {
                "text": f"{name}  appears HERE!",
                "fact_type": "state",
                "related": [],
                "excerpt": where,
                "evidence": quote,
            },
            {
                "text": f"{name} wants something.",
                "fact_type": "goal",
                "related": [],
                "excerpt": 99,
                "evidence": "not in any excerpt",
            },
        ],
        "attributes": [{"key": "goal", "value": "something", "fact_numbers": [3, 42]}],
        "summary": f"{name} is profiled.",
    }


def facts_responder(body: dict[str, Any], leave_out: str = "") -> dict[str, Any] | None:
    """Answers every listed entity from its own excerpts, except `leave_out`, which it skips."""
    prompt = last_user_text(body.get("messages", []))
    if "Return the facts, attributes and summary" not in prompt:
        return None
    excerpts = excerpt_texts(prompt)
    return {
        "items": [
            entity_answer(number, name, cited, excerpts)
            for number, name, cited in requested_entities(prompt)
            if name != leave_out
        ]
    }


def test_llm_path_fills_tables_and_quarantines_a_failed_entity(tmp_path: Path) -> None:
    with FakeOpenAIServer(model_names=("test-model",), responder=facts_responder) as server:
        llm_settings = fast_llm_settings(server.url, max_retries=1, concurrency=1)
        client = OpenAICompatibleClient(llm_settings, cache=None)
        settings = _settings().model_copy(
            update={"llm": llm_settings, "extract_graph": ExtractGraphSettings(combined=False)}
        )
        # extract_narrative runs first through the same server: let its requests through, then break
        # one entity.
        original = server.responder

        def responder(body: dict[str, Any]) -> Any:
            prompt = last_user_text(body.get("messages", []))
            listed = [name for _, name, _ in requested_entities(prompt)]
            if listed == ["Tom Hale"]:  # asked again on his own: a broken reply, twice
                return "{not json"
            if "Tom Hale" in listed:  # in a group, his answer is left out
                return facts_responder(body, leave_out="Tom Hale")
            return original(body) or {"events": [], "interactions": [], "occasions": []}

        server.responder = responder
        tables = _build(HARBOUR, tmp_path, settings, llm=client, lost=True)
    names = dict(zip(tables["entities"]["entity_id"], tables["entities"]["name"]))
    failures = tables["failures"]
    tom = next(e for e, n in names.items() if n == "Tom Hale")
    assert tom in set(failures["item_id"])
    assert json.loads(failures.set_index("item_id").loc[tom, "payload"])["status"] == "invalid"
    assert len(failures) == 1  # only the left-out entity; the others of its request were answered
    calls = tables["llm_calls"][tables["llm_calls"]["stage"] == "extract_facts"]
    assert calls["item_id"].str.contains(r"\+").any()  # entities share requests
    assert (calls["item_id"] == f"{tom}#again").sum() == 2  # asked again alone (and re-asked once)
    facts = tables["atomic_facts"]
    assert tom not in set(facts["entity_id"]) and tom not in set(tables["entity_profiles"]["entity_id"])
    assert len(facts) == 2 * (len(tables["entity_profiles"]))  # the near-duplicate fact was merged
    assert (facts["method"] == "llm").all() and facts["related_entity_ids"].map(len).eq(0).all()
    goal = tables["entity_attributes"]
    assert set(goal["key"]) == {"goal"} and goal["fact_ids"].map(len).eq(1).all()  # fact 42 does not exist
    assert tables["entity_profiles"]["summary"].str.endswith("is profiled.").all()
    _assert_spans_name_their_entity(
        tables | {"atomic_facts": facts[facts["fact_type"] == "state"]}, HARBOUR.read_text(encoding="utf-8")
    )
