"""A Chinese screenplay through every LLM stage of the build (the test server's fake model names
the prompt's known characters and the headings' places): rows at every stage, grounded in the
text, in the Chinese prompts' formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from flows.build.corpus import build, make_resources
from schemas.config import load_settings
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.tables.io import Workspace, read_frame
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

SCREENPLAY = Path(__file__).parent.parent / "fixtures" / "screenplays" / "zh_pharmacy_llm.txt"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Workspace, str, str]:
    workspace = Workspace.at(tmp_path_factory.mktemp("zh_llm") / "ws")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        llm = fast_llm_settings(server.url, max_retries=1)
        settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}}).model_copy(
            update={"llm": llm}
        )
        with OpenAICompatibleClient(llm, cache=None, sleep=lambda _s: None) as client:
            resources = make_resources(settings, llm=client)
            report = build([str(SCREENPLAY)], workspace, settings, resources=resources, quiet=True)
    assert report.ok, report.summary()
    doc_id = report.documents[0].doc_id
    return workspace, doc_id, read_frame(workspace, "documents", doc_id).iloc[0]["text"]


def test_the_graph_comes_from_the_llm_and_every_mention_is_a_span_of_the_text(built):
    workspace, doc_id, text = built
    raw = read_frame(workspace, "raw_entities", doc_id)
    assert len(raw) > 0 and (raw["method"] == "llm").all()
    entities = read_frame(workspace, "entities", doc_id)
    kinds = dict(zip(entities["name"], entities["entity_type"]))
    assert kinds.get("程勇") == "character" and kinds.get("吕受益") == "character"
    assert kinds.get("药店") == "location"  # from the scene headings "药店日内", "药店夜内"
    mentions = read_frame(workspace, "mentions", doc_id)
    assert len(mentions) >= text.count("程勇")
    assert all(text[m.char_start : m.char_end] == m.surface for m in mentions.itertuples())


def test_units_and_facts_quote_the_text(built):
    workspace, doc_id, text = built
    for table in ("events", "atomic_facts"):
        rows = read_frame(workspace, table, doc_id)
        assert len(rows) > 0 and (rows["method"] == "llm").all(), table
    events = read_frame(workspace, "events", doc_id)
    assert all(text[e.char_start : e.char_end] == e.evidence for e in events.itertuples())


def test_the_pharmacy_scenes_are_judged_continuous_by_the_llm(built):
    workspace, doc_id, _ = built
    sections = read_frame(workspace, "sections", doc_id)
    pharmacy = set(sections.loc[sections["heading"].str.contains("药店"), "section_id"])
    assert len(pharmacy) == 3
    judged = read_frame(workspace, "continuity_judgments", doc_id)
    assert len(judged) > 0 and (judged["method"] == "llm").all()
    together = judged[judged["scene_a"].isin(pharmacy) & judged["scene_b"].isin(pharmacy)]
    assert len(together) == 3 and together["is_continuity"].all()
    calls = read_frame(workspace, "llm_calls", doc_id)
    assert {"extract_graph", "judge_continuity", "chain_continuity", "track_character_states"} <= set(
        calls["stage"]
    )


def test_character_states_from_the_llm_quote_their_scene(built):
    workspace, doc_id, text = built
    states = read_frame(workspace, "character_states", doc_id)
    assert len(states) > 0 and (states["method"] == "llm").all()
    bounds = read_frame(workspace, "sections", doc_id).set_index("section_id")
    for row in states.itertuples():
        section = bounds.loc[row.section_id]
        assert section.char_start <= row.char_start < row.char_end <= section.char_end
        assert text[row.char_start : row.char_end] == row.evidence
