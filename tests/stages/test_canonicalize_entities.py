"""canonicalize_entities: rule decisions on homonyms, titles and cue names; the replayable
decision log; bounded blocking; the ablation switch; and the LLM path on undecided pairs."""

from __future__ import annotations

import re

import pandas as pd

from tasks.canonicalize import canonicalize_entities
from tasks.canonicalize.merge import apply_merge_decisions, resolve_decisions
from tasks.canonicalize.profiles import candidate_pairs, profile_entities
from tasks.canonicalize.rows import canonical_rows
from tasks.canonicalize.rules import rule_decisions
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.stage import StageContext
from tests.conftest import SCREENPLAY
from tests.fixtures.graph.helpers import (
    TWO_SMITHS,
    ZH_CUES,
    build_graph,
    graph_settings,
    merge_responder,
    tables,
)
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer


def raw_names(raw_entities: pd.DataFrame) -> dict[str, str]:
    return dict(zip(raw_entities["name"], raw_entities["raw_entity_id"]))


def canonical_of(mapping: dict[str, str], ids: dict[str, str], name: str) -> str:
    return mapping[ids[name]]


def decision_between(decisions: pd.DataFrame, a: str, b: str) -> dict:
    left, right = sorted((a, b))
    rows = decisions[(decisions["left"] == left) & (decisions["right"] == right)]
    assert len(rows) == 1, (a, b)
    return rows.iloc[0].to_dict()


def test_two_smiths_stay_two_and_titles_follow_gender(tmp_path):
    workspace, report = build_graph([TWO_SMITHS], tmp_path, graph_settings())
    assert report.ok, report.summary()
    raw, decisions, entities, mentions, relations, raw_mentions = tables(
        workspace,
        "two_smiths",
        "raw_entities",
        "merge_decisions",
        "entities",
        "mentions",
        "relations",
        "raw_mentions",
    )
    ids = raw_names(raw)
    mapping = apply_merge_decisions(raw, decisions)
    john, mary = mapping[ids["John Smith"]], mapping[ids["Mary Smith"]]
    assert john != mary
    assert mapping[ids["John"]] == mapping[ids["Mr. Smith"]] == john  # cue name and "Mr." title
    assert mapping[ids["Mary"]] == mapping[ids["Mrs. Smith"]] == mary
    assert mapping[ids["Smith"]] not in (john, mary)  # a bare "Smith" fits both
    bare = decision_between(decisions, ids["Smith"], ids["John Smith"])
    assert bare["decision"] == "separate" and "ambiguous" in bare["reason"] and "Mary Smith" in bare["reason"]
    siblings = decision_between(decisions, ids["John Smith"], ids["Mary Smith"])
    assert siblings["decision"] == "separate" and siblings["method"] == "rule:different_given_name"
    assert decision_between(decisions, ids["John"], ids["John Smith"])["method"] == "rule:cue_fullname"
    # Canonical rows: representative id, best full name, aliases from every member, remapped mentions.
    by_id = entities.set_index("entity_id").to_dict("index")
    assert by_id[john]["name"] == "John Smith" and {"JOHN", "John", "Mr. Smith"} <= set(
        by_id[john]["aliases"]
    )
    assert john in set(raw["raw_entity_id"]) and sorted(by_id[john]["raw_entity_ids"]) == sorted(
        r for r, c in mapping.items() if c == john
    )
    assert len(mentions) == len(raw_mentions) and set(mentions["entity_id"]) <= set(entities["entity_id"])
    assert by_id[john]["n_mentions"] == (mentions["entity_id"] == john).sum()
    assert (relations["source_entity_id"] < relations["target_entity_id"]).all()
    assert not relations.duplicated(["source_entity_id", "target_entity_id"]).any()
    neighbours = pd.concat(
        [
            relations[["source_entity_id", "target_entity_id"]].set_axis(["a", "b"], axis=1),
            relations[["target_entity_id", "source_entity_id"]].set_axis(["a", "b"], axis=1),
        ]
    )
    for entity_id, row in by_id.items():
        assert row["degree"] == neighbours[neighbours["a"] == entity_id]["b"].nunique()


def test_replaying_without_one_decision_restores_the_two_entities(tmp_path):
    workspace, report = build_graph([TWO_SMITHS], tmp_path, graph_settings())
    raw, decisions = tables(workspace, "two_smiths", "raw_entities", "merge_decisions")
    ids = raw_names(raw)
    full = apply_merge_decisions(raw, decisions)
    assert full[ids["John"]] == full[ids["John Smith"]]
    step = decision_between(decisions, ids["John"], ids["John Smith"])["step"]
    without = apply_merge_decisions(raw, decisions[decisions["step"] != step])
    assert without[ids["John"]] != without[ids["John Smith"]]
    assert without[ids["John"]] == ids["John"] or without[ids["John Smith"]] == ids["John Smith"]
    assert without[ids["Mr. Smith"]] == without[ids["John Smith"]]  # the other merges are untouched
    assert without[ids["Mary"]] == full[ids["Mary"]]
    # The stage's canonical ids are exactly the replay of its own decision log.
    entities = tables(workspace, "two_smiths", "entities")[0]
    assert set(entities["entity_id"]) == set(full.values())


def test_disabled_refinement_is_the_identity(tmp_path):
    settings = graph_settings(canonicalize_entities={"enabled": False})
    workspace, report = build_graph([TWO_SMITHS], tmp_path, settings)
    assert report.ok, report.summary()
    raw, decisions, entities, raw_relations, relations = tables(
        workspace, "two_smiths", "raw_entities", "merge_decisions", "entities", "raw_relations", "relations"
    )
    assert decisions.empty
    assert sorted(entities["entity_id"]) == sorted(raw["raw_entity_id"])
    assert len(relations) == len(raw_relations)


def test_chinese_kin_compounds_stay_apart_and_familiar_names_join(tmp_path):
    workspace, report = build_graph([ZH_CUES], tmp_path, graph_settings())
    assert report.ok, report.summary()
    doc_id = report.documents[0].doc_id
    raw, decisions, entities = tables(workspace, doc_id, "raw_entities", "merge_decisions", "entities")
    ids = raw_names(raw)
    mapping = apply_merge_decisions(raw, decisions)
    assert mapping[ids["老程"]] == mapping[ids["程勇"]]  # 老程 is used where 程勇 is the only 程
    assert mapping[ids["程勇爸爸"]] != mapping[ids["程勇"]]
    kin = decision_between(decisions, ids["程勇"], ids["程勇爸爸"])
    assert kin["decision"] == "separate"
    names = set(entities["name"])
    assert {"程勇", "程勇爸爸", "吕受益"} <= names and "老程" not in names


def profiles_for(names: list[tuple[str, str, int]]) -> tuple[pd.DataFrame, dict]:
    raw = pd.DataFrame(
        [
            {
                "raw_entity_id": f"rent_{i:04d}",
                "doc_id": "d",
                "name": n,
                "entity_type": t,
                "description": "",
                "surfaces": [n],
                "is_proxy": False,
                "n_mentions": m,
                "chunk_ids": [],
                "first_ordinal": None,
                "method": "test",
            }
            for i, (n, t, m) in enumerate(names)
        ]
    )
    empty_mentions = pd.DataFrame(
        columns=["mention_id", "raw_entity_id", "chunk_id", "surface", "char_start", "char_end"]
    )
    empty_chunks = pd.DataFrame(columns=["chunk_id", "char_start", "text", "section_id"])
    return raw, profile_entities(raw, empty_mentions, empty_chunks)


def test_blocking_is_bounded_per_entity():
    names = [(f"Agent {chr(65 + i // 26)}{chr(97 + i % 26)}son", "character", 1) for i in range(300)]
    names += [(f"Room {i}", "location", 1) for i in range(50)]
    _, profiles = profiles_for(names)
    pairs = candidate_pairs(profiles, max_candidates=8)
    per_entity = pd.Series([x for a, b, _ in pairs for x in (a, b)]).value_counts()
    all_pairs = len(names) * (len(names) - 1) // 2
    assert len(pairs) < all_pairs / 20 and per_entity.max() <= 2 * 8  # each side proposes at most 8
    types = {p.raw_id: p.entity_type for p in profiles.values()}
    assert all(types[a] == types[b] for a, b, _ in pairs)  # never across types


def test_rules_on_inline_names():
    raw, profiles = profiles_for(
        [
            ("Holden", "character", 40),
            ("Holden McNeil", "character", 2),
            ("McNeil", "character", 1),
            ("Cohee", "character", 5),
            ("Cohee Lundin", "character", 2),
            ("Cohee Lundon", "character", 1),
            ("Kid", "character", 3),
            ("Little Kid", "character", 2),
            ("Comic Book Store", "location", 4),
            ("Comic Book Stores", "location", 1),
        ]
    )
    ids = dict(zip(raw["name"], raw["raw_entity_id"]))
    pairs = candidate_pairs(profiles, 8)
    decided, undecided = rule_decisions(
        profiles, pairs, pd.DataFrame(columns=["source_raw_id", "target_raw_id", "method"]), 0.88
    )
    ordered = resolve_decisions(decided)
    rows = [{"step": i, **d.__dict__} for i, d in enumerate(ordered, start=1)]
    mapping = apply_merge_decisions(raw, rows)
    assert mapping[ids["Holden"]] == mapping[ids["Holden McNeil"]] == mapping[ids["McNeil"]] == ids["Holden"]
    # Two spellings of one full name are one candidate, so "Cohee" is not ambiguous between them.
    assert mapping[ids["Cohee"]] == mapping[ids["Cohee Lundin"]] == mapping[ids["Cohee Lundon"]]
    assert mapping[ids["Kid"]] != mapping[ids["Little Kid"]]  # role words are not names
    assert mapping[ids["Comic Book Store"]] == mapping[ids["Comic Book Stores"]]
    assert any({a, b} == {ids["Kid"], ids["Little Kid"]} for a, b, _ in undecided)
    mentions = pd.DataFrame(
        columns=["mention_id", "raw_entity_id", "chunk_id", "surface", "char_start", "char_end"]
    )
    relations = pd.DataFrame(
        [
            {
                "raw_relation_id": "r1",
                "source_raw_id": ids["Holden"],
                "target_raw_id": ids["McNeil"],
                "description": "self after merge",
                "keywords": ["x"],
                "weight": 1.0,
                "chunk_ids": [],
            },
            {
                "raw_relation_id": "r2",
                "source_raw_id": ids["Holden"],
                "target_raw_id": ids["Cohee"],
                "description": "a",
                "keywords": ["talk"],
                "weight": 1.0,
                "chunk_ids": [],
            },
            {
                "raw_relation_id": "r3",
                "source_raw_id": ids["Cohee Lundon"],
                "target_raw_id": ids["McNeil"],
                "description": "b",
                "keywords": ["talk"],
                "weight": 2.0,
                "chunk_ids": [],
            },
        ]
    )
    out = canonical_rows(
        "d",
        raw,
        mentions,
        relations,
        pd.DataFrame(columns=["chunk_id", "ordinal", "section_id"]),
        pd.DataFrame(columns=["section_id", "ordinal"]),
        mapping,
        600,
    )
    assert len(out["relations"]) == 1  # the self-relation is dropped, the two Holden-Cohee edges are one
    assert out["relations"][0]["weight"] == 3.0 and out["relations"][0]["raw_relation_ids"] == ["r2", "r3"]


def _run_with_llm(workspace, doc_id: str, server: FakeOpenAIServer) -> dict:
    inputs = {
        t: tables(workspace, doc_id, t)[0]
        for t in ("documents", "sections", "chunks", "raw_entities", "raw_mentions", "raw_relations")
    }
    client = OpenAICompatibleClient(fast_llm_settings(server.url, concurrency=1), cache=None)
    ctx = StageContext(
        stage="canonicalize_entities", doc_id=doc_id, settings=graph_settings(), tables=inputs, llm=client
    )
    return canonicalize_entities.run(ctx)


def test_llm_judges_only_undecided_pairs_and_failures_stay_separate(tmp_path):
    workspace, report = build_graph([SCREENPLAY], tmp_path, graph_settings())
    assert report.ok, report.summary()
    raw = tables(workspace, "the_lighthouse_key", "raw_entities")[0]
    ids = raw_names(raw)
    responder = merge_responder({frozenset({"Margaret", "Maggie"})})
    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        out = _run_with_llm(workspace, "the_lighthouse_key", server)
        asked = [
            r
            for r in server.chat_requests()
            if r.body["response_format"]["json_schema"]["name"] == "MergeJudgementBatch"
        ]
    decisions = pd.DataFrame(out["merge_decisions"])
    llm_rows = decisions[decisions["method"] == "llm"]
    assert len(llm_rows) > len(asked) > 0  # several open pairs share a request
    assert not (decisions["method"] == "rule:no_evidence").any()
    inputs = tables(
        workspace, "the_lighthouse_key", "raw_entities", "raw_mentions", "raw_relations", "chunks"
    )
    _, _, undecided = canonicalize_entities.plan_decisions(*inputs, 0.88, 8)
    assert {(a, b) for a, b, _ in undecided} == set(
        zip(llm_rows["left"], llm_rows["right"])
    )  # only what rules left open
    maggie = decision_between(decisions, ids["Margaret"], ids["Maggie"])
    assert maggie["decision"] == "merge" and "nickname" in maggie["reason"]
    mapping = apply_merge_decisions(raw, decisions)
    assert mapping[ids["Maggie"]] == mapping[ids["Margaret Hale"]] != mapping[ids["Tom Hale"]]
    assert len(out["entities"]) == len(set(mapping.values())) and not out["failures"]
    assert len(out["llm_calls"]) == len(asked)

    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        server.queue_faults("malformed_json", "malformed_json")  # the first request, and its re-ask
        faulty = _run_with_llm(workspace, "the_lighthouse_key", server)
        first = server.chat_requests()[0].body["messages"][-1]["content"]
    in_first = len(re.findall(r"^\d+\. R\d+ and R\d+$", first, re.MULTILINE))
    assert in_first >= 1 and len(faulty["failures"]) == in_first  # one row per pair of the failed request
    assert {f["stage"] for f in faulty["failures"]} == {"canonicalize_entities"}
    failed = [d for d in faulty["merge_decisions"] if "LLM item failed" in d["reason"]]
    assert len(failed) == in_first and {d["decision"] for d in failed} == {"separate"}
    assert {d["left"] + "|" + d["right"] for d in failed} == {f["item_id"] for f in faulty["failures"]}
