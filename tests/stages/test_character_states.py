"""Character states (paper appendix D.2): offline, observable states from action lines,
parentheticals and cues, each quoting a span of its scene (English and Chinese); with an LLM,
the extract -> critic -> revise loop until the critic accepts or the round limit."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pytest

from flows.build.corpus import build, make_resources
from flows.stages import STAGES_BY_NAME, select_stages
from schemas.config import load_settings
from tasks.character_states.offline import state_kind
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY
from tests.fixtures.llm_fixtures import TEST_MODEL, fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.pipeline_llm import pipeline_responder

DOC = "the_lighthouse_key"
ZH_SCENE = """1. 王子神油店日内
程勇坐在店里抽烟，一脸无奈。
宾馆老板走进来。
宾馆老板：老程，房租什么时候交？
程勇一脸颓势：谢了。

2. 街道夜外
程勇把钱递给吕受益。
吕受益：谢谢你，程老板。
"""


def _assert_spans(states: pd.DataFrame, sections: pd.DataFrame, text: str) -> None:
    bounds = sections.set_index("section_id")
    assert len(states) > 0
    for row in states.itertuples():
        section = bounds.loc[row.section_id]
        assert section.char_start <= row.char_start < row.char_end <= section.char_end, row.state_id
        assert text[row.char_start : row.char_end] == row.evidence


@pytest.mark.parametrize(
    "text, kind",
    [
        ("Ellis sits in the corner.", "posture"),
        ("Nia stares at the drawer.", "expression"),
        ("She whispers it.", "tone"),
        ("He wears a waxed jacket.", "appearance"),
        ("Tom takes the key.", "action"),
        ("程勇坐在店里抽烟", "posture"),
        ("一脸颓势", "expression"),
    ],
)
def test_state_kinds(text: str, kind: str) -> None:
    assert state_kind(text) == kind


def test_offline_states_quote_their_scene(sample_workspace):
    states = read_frame(sample_workspace, "character_states", DOC)
    sections = read_frame(sample_workspace, "sections", DOC)
    text = read_frame(sample_workspace, "documents", DOC).iloc[0]["text"]
    _assert_spans(states, sections, text)
    entities = read_frame(sample_workspace, "entities", DOC).set_index("entity_id")
    assert (entities.loc[states["entity_id"], "entity_type"] == "character").all()
    assert (states["method"] == "offline").all() and states["accepted"].all() and (states["round"] == 1).all()
    named = {(entities.loc[r.entity_id, "name"], r.state_kind, r.state) for r in states.itertuples()}
    assert ("Ellis Crowe", "posture", "Ellis sits in the corner with a pint he has not touched.") in named
    assert ("Ellis Crowe", "tone", "without looking up") in named  # a parenthetical under his cue
    assert ("Margaret Hale", "tone", "heard in voice-over") in named  # MARGARET (V.O.)
    assert states.groupby(["section_id", "entity_id"]).size().max() <= 4  # max_states_per_character


def test_chinese_states_from_action_lines_and_cue_manner(tmp_path: Path, hashing_settings):
    path = tmp_path / "shop.zh.txt"
    path.write_text(ZH_SCENE, encoding="utf-8")
    workspace = Workspace.at(tmp_path / "ws")
    report = build([str(path)], workspace, hashing_settings, quiet=True)
    assert report.ok, report.summary()
    doc_id = report.documents[0].doc_id
    states = read_frame(workspace, "character_states", doc_id)
    _assert_spans(states, read_frame(workspace, "sections", doc_id), ZH_SCENE)
    names = dict(zip(*[read_frame(workspace, "entities", doc_id)[c] for c in ("entity_id", "name")]))
    found = {(names[r.entity_id], r.state_kind, r.state) for r in states.itertuples()}
    assert ("程勇", "posture", "程勇坐在店里抽烟，一脸无奈。") in found
    assert ("程勇", "expression", "一脸颓势") in found  # the manner words of his cue


def _llm_states(source, tmp_path: Path, **states_settings) -> tuple[pd.DataFrame, pd.DataFrame, Workspace]:
    workspace = Workspace.at(tmp_path / "ws")
    shutil.copytree(source.root, workspace.root)
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        llm = fast_llm_settings(server.url, max_retries=1)
        settings = load_settings(
            overrides={"embed_texts": {"backend": "hashing"}, "character_states": states_settings}
        )
        settings = settings.model_copy(update={"llm": llm})
        with OpenAICompatibleClient(llm, cache=None, sleep=lambda _s: None) as client:
            report = build(
                [str(SCREENPLAY)],
                workspace,
                settings,
                stages=[STAGES_BY_NAME["track_character_states"]],
                resources=make_resources(settings, llm=client),
                quiet=True,
            )
    assert not any(o.status == "failed" for d in report.documents for o in d.outcomes)
    return read_frame(workspace, "character_states", DOC), read_frame(workspace, "llm_calls", DOC), workspace


def test_llm_loop_revises_until_the_critic_accepts(sample_workspace, tmp_path: Path):
    states, calls, workspace = _llm_states(sample_workspace, tmp_path / "two")
    assert len(states) > 0 and (states["method"] == "llm").all() and states["accepted"].all()
    assert set(states["round"]) == {1, 2}  # one-character scenes pass at once; the others are sent back once
    assert {"extract_states/v3", "critique_states/v3"} == set(calls["prompt_id"])
    sections = read_frame(workspace, "sections", DOC)
    _assert_spans(states, sections, read_frame(workspace, "documents", DOC).iloc[0]["text"])
    capped, _, _ = _llm_states(sample_workspace, tmp_path / "one", max_rounds=1)
    assert (capped["round"] == 1).all() and not capped["accepted"].all() and capped["accepted"].any()


def test_without_the_critic_states_are_written_once_and_left_unreviewed(sample_workspace, tmp_path: Path):
    reviewed, _, _ = _llm_states(sample_workspace, tmp_path / "reviewed", max_rounds=1)
    states, calls, _ = _llm_states(sample_workspace, tmp_path / "once", critic=False, max_rounds=3)
    assert set(calls["prompt_id"]) == {"extract_states/v3"}  # no critic request, no second round
    assert (states["round"] == 1).all() and not states["accepted"].any()
    # the same first-pass states as a one-round build with the critic, only the label differs
    columns = ["state_id", "entity_id", "state", "evidence", "char_start", "char_end"]
    assert (
        states[columns]
        .sort_values("state_id")
        .reset_index(drop=True)
        .equals(reviewed[columns].sort_values("state_id").reset_index(drop=True))
    )


def test_after_a_combined_extraction_the_first_round_asks_nothing(tmp_path: Path):
    """The combined extraction wrote each passage's states (raw_units kind "state"): the stage reads
    them as its first round, so without the critic it sends no request."""
    workspace = Workspace.at(tmp_path / "ws")
    with FakeOpenAIServer(model_names=(TEST_MODEL,), responder=pipeline_responder) as server:
        llm = fast_llm_settings(server.url, max_retries=1)
        settings = load_settings(
            overrides={"embed_texts": {"backend": "hashing"}, "character_states": {"critic": False}}
        )
        settings = settings.model_copy(update={"llm": llm})
        with OpenAICompatibleClient(llm, cache=None, sleep=lambda _s: None) as client:
            report = build(
                [str(SCREENPLAY)],
                workspace,
                settings,
                stages=select_stages(until="track_character_states"),
                resources=make_resources(settings, llm=client),
                quiet=True,
            )
    assert report.ok, report.summary()
    raw = read_frame(workspace, "raw_units", DOC)
    assert (raw["kind"] == "state").any()
    calls = read_frame(workspace, "llm_calls", DOC)
    assert not (calls["stage"] == "track_character_states").any()
    states = read_frame(workspace, "character_states", DOC)
    assert (states["method"] == "llm").all() and (states["round"] == 1).all()
    text = read_frame(workspace, "documents", DOC).iloc[0]["text"]
    _assert_spans(states, read_frame(workspace, "sections", DOC), text)
