"""extract_graph: the offline readers (screenplay en/zh, prose) and the LLM path through the
fake OpenAI-compatible server, checked on small fixtures through the real runner."""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd
import pytest

from schemas.responses.graph import GraphExtraction
from tasks.graph.heuristics import extract_heuristic, offline_characters
from tasks.graph.llm import ChunkReply, ground_replies
from tasks.graph.names import display_name, normalize_name, raw_entity_id
from tasks.graph.packing import split_reply
from tasks.graph.section_labels import label_keys
from tasks.graph.screenplay import normalize_cue
from tasks.graph.upsert import ChunkIndex, GraphDraft
from tasks.graph.zh import resolve_speakers
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.chunk_packs import Member
from tasks.tables.io import read_frame
from tests.fixtures.graph.helpers import (
    TWO_SMITHS,
    ZH_CUES,
    build_graph,
    graph_settings,
    outcome,
    smiths_responder,
    tables,
)
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer


def assert_grounded(text: str, mentions: pd.DataFrame, chunks: pd.DataFrame) -> None:
    """Every mention lies inside its chunk and the text at its span is its surface."""
    bounds = chunks.set_index("chunk_id")[["char_start", "char_end"]].to_dict("index")
    assert len(mentions)
    for m in mentions.itertuples():
        chunk = bounds[m.chunk_id]
        assert chunk["char_start"] <= m.char_start < m.char_end <= chunk["char_end"], m
        assert m.surface and m.surface in text[m.char_start : m.char_end], m


def by_name(entities: pd.DataFrame) -> dict[str, dict]:
    return {row["name"]: row for row in entities.to_dict("records")}


# -- pure pieces -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "cue",
    [
        "JOHN",
        "JOHN (V.O.)",
        "JOHN (CONT'D)",
        "JOHN (V.O.) (CONT'D)",
        "JOHN ^",
        "OC JOHN",
        "JOHN V.O.",
        "JOHN (O.S.)",
    ],
)
def test_cue_variants_name_one_speaker(cue):
    assert normalize_name(normalize_cue(cue)) == "john"


@pytest.mark.parametrize(
    "cue", ["P.O.V. OF JOHN", "CREDITS", "AT THE DART BOARD", "HANGING OUT MONTAGE BEGINS", "I..."]
)
def test_non_speaker_cues_are_rejected(cue):
    assert normalize_cue(cue) is None


def test_raw_ids_consolidate_case_and_articles():
    assert raw_entity_id("d", "character", "JOHN") == raw_entity_id("d", "character", "John")
    assert raw_entity_id("d", "location", "THE ANCHOR PUB") == raw_entity_id("d", "location", "Anchor Pub")
    assert raw_entity_id("d", "character", "John") != raw_entity_id("d", "object", "John")
    assert display_name("STEVE-DAVE") == "Steve-Dave" and display_name("JOHN'S CAR") == "John's Car"


def test_zh_speakers_strip_manner_and_voice_but_keep_kin():
    raw = Counter(
        {
            "程勇": 5,
            "程勇一脸颓势": 1,
            "程勇不耐烦": 2,
            "程勇爸爸": 3,
            "程勇爸爸OS": 1,
            "程勇爸爸不耐烦地": 1,
            "吕受益妻子": 4,
            "吕受益": 6,
            "电视里的赵立忠": 1,
            "赵立忠": 2,
        }
    )
    resolved = {raw_name: s.name for raw_name, s in resolve_speakers(raw, "").items()}
    assert resolved["程勇一脸颓势"] == resolved["程勇不耐烦"] == "程勇"
    assert resolved["程勇爸爸OS"] == resolved["程勇爸爸不耐烦地"] == resolved["程勇爸爸"] == "程勇爸爸"
    assert resolved["吕受益妻子"] == "吕受益妻子" and resolved["电视里的赵立忠"] == "赵立忠"


def test_prompts_render_in_both_languages():
    from tasks.llm.requests.prompts import load_prompt, render_messages

    values = {
        "title": "T",
        "language": "zh",
        "known_names": "程勇",
        "already_found": "（尚无）",
        "text": "程勇：你好。",
    }
    messages = render_messages(load_prompt("extract_graph/v1", "zh"), values)
    assert messages[0]["role"] == "system" and "已知人物：程勇" in messages[-1]["content"]
    english = render_messages(load_prompt("extract_graph/v1", "en"), {**values, "language": "en"})
    assert "Known characters: 程勇" in english[-1]["content"] and "程勇：你好。" in english[-1]["content"]
    for language in ("en", "zh"):
        judge = render_messages(
            load_prompt("canonicalize_entities/v1", language),
            {"title": "T", "language": language, "left": "name: A", "right": "name: B"},
        )
        assert "name: A" in judge[-1]["content"] and "name: B" in judge[-1]["content"]


# -- offline, through the runner -------------------------------------------------------------


def test_screenplay_cues_intros_objects_and_relations(tmp_path):
    workspace, report = build_graph([TWO_SMITHS], tmp_path, graph_settings(split_chunks={"chunk_tokens": 60}))
    assert report.ok, report.summary()
    entities, mentions, relations, chunks, documents = tables(
        workspace, "two_smiths", "raw_entities", "raw_mentions", "raw_relations", "chunks", "documents"
    )
    assert len(chunks) > 1
    text = documents.iloc[0]["text"]
    assert_grounded(text, mentions, chunks)
    names = by_name(entities)
    # Cue variants (V.O., CONT'D, O.S., ^) and action-line "John" are one raw entity per name.
    assert sum(n.lower() == "john" for n in names) == 1 and sum(n.lower() == "mary" for n in names) == 1
    john = names["John"]
    assert john["entity_type"] == "character" and john["n_mentions"] >= 8
    assert {"JOHN", "John"} <= set(john["surfaces"])
    assert "ferry pilot" in names["John Smith"]["description"]  # the introduction line describes him
    assert names["brass key"]["entity_type"] == "object" and names["brass key"]["n_mentions"] >= 3
    assert {"Smith Kitchen", "Harbour Wall", "Ferry Cabin"} <= {
        n for n, r in names.items() if r["entity_type"] == "location"
    }
    assert names["Night"]["entity_type"] == "time"
    assert {"Mr. Smith", "Mrs. Smith", "Smith"} <= set(names)  # kept raw: canonicalization decides
    ids = {r["name"]: r["raw_entity_id"] for r in names.values()}
    assert (relations["source_raw_id"] < relations["target_raw_id"]).all()
    pairs = {
        frozenset((s, t)): r
        for s, t, r in zip(relations.source_raw_id, relations.target_raw_id, relations.to_dict("records"))
    }
    talk = pairs[frozenset((ids["John"], ids["Mary"]))]
    assert "dialogue" in list(talk["keywords"]) and talk["weight"] >= 3 and len(talk["description"]) <= 600
    assert (
        frozenset((ids["Mary Smith"], ids["brass key"])) in pairs
    )  # "MARY SMITH (30s) ... She pockets the brass key."
    assert frozenset((ids["John"], ids["Harbour Wall"])) in pairs  # present in the scene at that location
    chunk_ids = set(chunks["chunk_id"])
    assert all(set(c) <= chunk_ids and len(c) for c in relations["chunk_ids"])


def test_chinese_cues_make_one_speaker_per_name(tmp_path):
    workspace, report = build_graph([ZH_CUES], tmp_path, graph_settings())
    assert report.ok, report.summary()
    doc_id = report.documents[0].doc_id
    entities, mentions, chunks, documents, sections = tables(
        workspace, doc_id, "raw_entities", "raw_mentions", "chunks", "documents", "sections"
    )
    assert documents.iloc[0]["language"] == "zh"
    assert_grounded(documents.iloc[0]["text"], mentions, chunks)
    names = by_name(entities)
    characters = {n for n, r in names.items() if r["entity_type"] == "character"}
    assert {"程勇", "程勇爸爸", "吕受益"} <= characters
    assert not any(
        n.startswith("程勇") and n not in ("程勇", "程勇爸爸") for n in characters
    )  # no "程勇一脸颓势"
    section_of = chunks.set_index("chunk_id")["section_id"].to_dict()
    speaks_in = {
        section_of[m.chunk_id]
        for m in mentions.itertuples()
        if m.raw_entity_id == names["程勇"]["raw_entity_id"]
    }
    assert speaks_in == set(sections["section_id"])
    assert {"药店", "医院"} <= {n for n, r in names.items() if r["entity_type"] == "location"}


def test_prose_names_role_actors_and_attribution(tmp_path):
    story = tmp_path / "nils.txt"
    story.write_text(
        "# Nils and the Troll\n\nIn the old days a charcoal-burner named Nils lived near Lake Rasval. "
        "People called him "
        'Charcoal Nils.\n\nOne day a strange woman came to the kiln. "Shall I help you?" asked the woman.\n\n'
        '"Yes," said Nils. "Help would be welcome."\n\n'
        "The woman worked hard, and Nils was glad. On Sunday Nils went to "
        'church and met the priest.\n\n"Beware of her," said the priest. "She is a troll."\n\n'
        "Nils went home to the "
        'woman. "Go back to the forest," said Nils. '
        "The woman wept by Lake Rasval, and the priest prayed for Charcoal "
        "Nils.\n",
        encoding="utf-8",
    )
    workspace, report = build_graph([story], tmp_path, graph_settings())
    assert report.ok, report.summary()
    entities, mentions, relations, chunks, documents = tables(
        workspace, "nils", "raw_entities", "raw_mentions", "raw_relations", "chunks", "documents"
    )
    assert_grounded(documents.iloc[0]["text"], mentions, chunks)
    names = by_name(entities)
    assert names["Nils"]["entity_type"] == "character" and names["Nils"]["n_mentions"] >= 6
    assert {"Charcoal Nils", "woman", "priest"} <= set(names)
    assert names["Lake Rasval"]["entity_type"] == "location"
    assert "Sunday" not in names and "Yes" not in names and "One" not in names
    ids = {n: r["raw_entity_id"] for n, r in names.items()}
    pairs = {frozenset(p) for p in zip(relations.source_raw_id, relations.target_raw_id)}
    assert (
        frozenset((ids["Nils"], ids["woman"])) in pairs and frozenset((ids["Nils"], ids["priest"])) in pairs
    )


def test_offline_extraction_is_deterministic(sample_workspace):
    inputs = {
        t: read_frame(sample_workspace, t, "the_lighthouse_key")
        for t in ("documents", "sections", "chunks", "sentences")
    }
    doc = inputs["documents"].iloc[0]
    run = lambda: extract_heuristic(
        doc.doc_id,
        doc.text,
        doc.language,
        doc.kind,
        doc.title,
        inputs["sections"],  # noqa: E731
        inputs["chunks"],
        inputs["sentences"],
        2,
        600,
    )
    first, second = run(), run()
    assert json.dumps(first, sort_keys=True, default=str) == json.dumps(second, sort_keys=True, default=str)
    names = {r["name"] for r in first[0]["raw_entities"]}
    assert {"Margaret Hale", "Tom Hale", "Ellis Crowe", "brass key", "tobacco tin"} <= names


def test_offline_characters_are_the_characters_of_the_full_offline_reading(tmp_path, sample_workspace):
    # The LLM path reads only the characters (its known names); they must be the full reading's.
    zh_workspace, _ = build_graph([ZH_CUES], tmp_path, graph_settings())
    docs = [(sample_workspace, "the_lighthouse_key"), (sample_workspace, "the_fisherman_and_his_wife")]
    zh_doc = read_frame(zh_workspace, "documents")["doc_id"].iloc[0]
    for workspace, doc_id in docs + [(zh_workspace, zh_doc)]:
        documents, sections, chunks, sentences = tables(
            workspace, doc_id, "documents", "sections", "chunks", "sentences"
        )
        doc = documents.iloc[0]
        reading = (doc.doc_id, doc.text, doc.language, doc.kind, doc.title, sections, chunks, sentences, 2)
        rows, _ = extract_heuristic(*reading, 600)
        full = sorted(
            (r["name"], r["n_mentions"]) for r in rows["raw_entities"] if r["entity_type"] == "character"
        )
        light = sorted((c["name"], c["n_mentions"]) for c in offline_characters(*reading))
        assert light == full and len(full) >= 2, doc_id


# -- the LLM path ----------------------------------------------------------------------------


def test_llm_path_fills_the_same_tables_with_proxies_and_grounding(tmp_path):
    settings = graph_settings(
        split_chunks={"chunk_tokens": 60},
        extract_graph={"gleaning": True, "pack_tokens": 0, "combined": False},
    )
    with FakeOpenAIServer(model_names=("test-model",), responder=smiths_responder) as server:
        client = OpenAICompatibleClient(fast_llm_settings(server.url), cache=None)
        workspace, report = build_graph([TWO_SMITHS], tmp_path, settings, llm=client)
        requests = [
            r
            for r in server.chat_requests()
            if r.body["response_format"]["json_schema"]["name"] == "GraphExtraction"
        ]
    assert report.ok, report.summary()
    built = outcome(report, "extract_graph")
    assert built.status == "built" and any("not found in their chunk" in w for w in built.warnings)
    entities, mentions, relations, chunks, documents, calls = tables(
        workspace,
        "two_smiths",
        "raw_entities",
        "raw_mentions",
        "raw_relations",
        "chunks",
        "documents",
        "llm_calls",
    )
    assert_grounded(documents.iloc[0]["text"], mentions, chunks)
    names = by_name(entities)
    assert names["John Smith"]["n_mentions"] >= 5 and names["John Smith"]["method"].startswith("llm")
    assert "Captain Ahab" not in names  # never in the text and needed by no relation
    proxy = names["storm"]
    assert proxy["is_proxy"] and proxy["entity_type"] == "concept"
    assert len(relations) and set(relations["method"]) <= {"llm", "llm:gleaning", "llm+llm:gleaning"}
    # One request per chunk plus one gleaning request per answered chunk; every attempt is an llm_calls row.
    assert len(requests) == 2 * len(chunks) and (calls["stage"] == "extract_graph").sum() == len(requests)
    assert "Known characters:" in requests[0].body["messages"][-1]["content"]


@pytest.mark.parametrize("faults", [("malformed_json", "malformed_json"), ("length", "length")])
def test_llm_faults_become_failures_not_empty_entities(tmp_path, faults):
    settings = graph_settings(
        split_chunks={"chunk_tokens": 60}, extract_graph={"pack_tokens": 0, "combined": False}
    )
    with FakeOpenAIServer(model_names=("test-model",), responder=smiths_responder) as server:
        server.queue_faults(*faults)
        client = OpenAICompatibleClient(fast_llm_settings(server.url, concurrency=1), cache=None)
        workspace, report = build_graph([TWO_SMITHS], tmp_path, settings, llm=client)
    # Items the LLM lost make the stage partial and the build not ok; no stage fails outright.
    assert not report.ok and report.count("partial") == 1 and report.count("failed") == 0, report.summary()
    entities, failures, chunks = tables(workspace, "two_smiths", "raw_entities", "failures", "chunks")
    assert len(failures) == 1 and failures.iloc[0]["stage"] == "extract_graph"
    assert failures.iloc[0]["item_id"] in set(chunks["chunk_id"])
    assert ("invalid" if faults[0] == "malformed_json" else "truncated") in failures.iloc[0]["error"]
    assert len(entities) and entities["name"].str.len().min() > 0  # the other chunks still count


def test_packed_requests_keep_every_entity_relation_and_span_of_per_chunk_requests(tmp_path):
    found = {}
    for budget in (0, 400):
        settings = graph_settings(
            split_chunks={"chunk_tokens": 60}, extract_graph={"pack_tokens": budget, "combined": False}
        )
        with FakeOpenAIServer(model_names=("test-model",), responder=smiths_responder) as server:
            client = OpenAICompatibleClient(fast_llm_settings(server.url), cache=None)
            workspace, report = build_graph([TWO_SMITHS], tmp_path / str(budget), settings, llm=client)
            requests = len(server.chat_requests())
        assert report.ok, report.summary()
        entities, mentions, relations, chunks, documents = tables(
            workspace, "two_smiths", "raw_entities", "raw_mentions", "raw_relations", "chunks", "documents"
        )
        assert_grounded(documents.iloc[0]["text"], mentions, chunks)
        found[budget] = (
            requests,
            set(entities["name"]),
            set(zip(mentions["char_start"], mentions["char_end"])),
            len(relations),
            len(chunks),
        )
    assert found[400][0] < found[0][0] == found[0][4]  # fewer requests than one per chunk
    assert found[400][1] >= found[0][1] - {"storm"} and found[400][2] >= found[0][2]  # nothing lost
    assert found[400][3] >= 1


def test_ground_replies_keeps_unfound_entities_only_when_a_relation_needs_them():
    text = "Tom gives Nia the key."
    chunks = pd.DataFrame(
        [
            {
                "chunk_id": "c1",
                "section_id": "s1",
                "ordinal": 1,
                "char_start": 0,
                "char_end": len(text),
                "text": text,
            }
        ]
    )
    reply = GraphExtraction.model_validate(
        {
            "entities": [
                {"name": "Tom Hale", "type": "character", "description": "a fisherman", "aliases": []},
                {"name": "Nia", "type": "character", "description": "", "aliases": []},
                {"name": "the Trust", "type": "institution", "description": "", "aliases": []},
                {"name": "Ellis", "type": "character", "description": "", "aliases": []},
            ],
            "relations": [
                {
                    "source": "Tom Hale",
                    "target": "Nia",
                    "description": "Tom gives Nia the key.",
                    "keywords": ["give"],
                    "strength": 8,
                },
                {"source": "Nia", "target": "the Trust", "description": "", "keywords": [], "strength": 2},
                {"source": "Tom Hale", "target": "key", "description": "", "keywords": [], "strength": 5},
            ],
        }
    )
    draft = GraphDraft("d", text, ChunkIndex(chunks))
    dropped = ground_replies(draft, [ChunkReply("c1", 0, text, reply, "llm")], "en")
    rows = draft.to_rows(600)
    entities = {r["name"]: r for r in rows["raw_entities"]}
    assert dropped == 1 and "Ellis" not in entities  # not in the chunk, no relation
    assert entities["Tom Hale"]["n_mentions"] == 1  # grounded by its first name
    assert entities["Trust"]["n_mentions"] == 0 and not entities["Trust"]["is_proxy"]  # kept for its relation
    assert entities["key"]["is_proxy"] and entities["key"]["n_mentions"] == 1
    assert len(rows["raw_relations"]) == 3


def test_scene_headings_and_section_labels_are_never_entities():
    """A small model copies the text's structure out as entities; those names are dropped, with the
    relations that name them, and a place named inside a heading stays an entity."""
    text = "12 INT. FERRY - NIGHT\nTom shows Nia the ticket on the ferry."
    chunk = {"chunk_id": "c1", "section_id": "s1", "ordinal": 1, "char_start": 0, "char_end": len(text)}
    chunks = pd.DataFrame([{**chunk, "text": text}])
    entity = lambda name, kind="concept": {"name": name, "type": kind, "description": "", "aliases": []}  # noqa: E731
    reply = GraphExtraction.model_validate(
        {
            "entities": [
                entity("12 INT. FERRY - NIGHT"),
                entity("Scene 12"),
                entity("Preamble"),
                entity("Tom", "character"),
                entity("Nia", "character"),
                entity("ferry", "location"),
            ],
            "relations": [
                {"source": "Tom", "target": "Scene 12", "description": "", "keywords": [], "strength": 3},
                {"source": "Tom", "target": "Nia", "description": "shows", "keywords": [], "strength": 5},
            ],
        }
    )
    draft = GraphDraft("d", text, ChunkIndex(chunks))
    headings = label_keys(["12 INT. FERRY - NIGHT", "PREAMBLE"])
    dropped = ground_replies(draft, [ChunkReply("c1", 0, text, reply, "llm")], "en", headings)
    rows = draft.to_rows(600)
    assert sorted(r["name"] for r in rows["raw_entities"]) == ["Nia", "Tom", "ferry"]
    assert dropped == 3 and len(rows["raw_relations"]) == 1


def test_labels_named_only_by_relations_and_other_characters_as_aliases_make_no_entity():
    """Seen with the 0.5B model on a new screenplay: relations chaining the scene headings (one of
    them renumbered and title-cased) became proxy entities, and the first character listed the
    others as its aliases, so they were grounded as her and dropped."""
    text = "1 EXT. PIER - NIGHT\nANNA checks her watch. LEO runs up the pier.\nLEO\nWait, Anna."
    chunk = {"chunk_id": "c1", "section_id": "s1", "ordinal": 1, "char_start": 0, "char_end": len(text)}
    chunks = pd.DataFrame([{**chunk, "text": text}])
    person = lambda name, aliases: {"name": name, "type": "character", "description": "", "aliases": aliases}  # noqa: E731
    link = lambda a, b: {"source": a, "target": b, "description": "", "keywords": [], "strength": 1}  # noqa: E731
    reply = GraphExtraction.model_validate(
        {
            "entities": [person("Anna", ["Anna Price", "Leo"]), person("Leo", ["Anna"])],
            "relations": [
                link("Preamble", "1 EXT. PIER - NIGHT"),
                link("1 EXT. PIER - NIGHT", "5 Ext. Ferry Deck - Later"),
                link("Leo", "Anna"),
            ],
        }
    )
    draft = GraphDraft("d", text, ChunkIndex(chunks))
    headings = label_keys(["1 EXT. PIER - NIGHT"])
    (part,) = split_reply(reply, (Member("c1", 0, text),), "en")  # as every reply is, before grounding
    ground_replies(draft, [ChunkReply("c1", 0, text, part, "llm")], "en", headings)
    rows = draft.to_rows(600)
    entities = {r["name"]: r for r in rows["raw_entities"]}
    assert sorted(entities) == ["Anna", "Leo"]
    assert entities["Leo"]["n_mentions"] == 2 and entities["Anna"]["n_mentions"] == 2
    assert len(rows["raw_relations"]) == 1
