"""Each query-time ablation switch removes one component, and only that one: asserted from the
`qa_traces` (what every tool call returned) and `qa_answers` of an offline evaluation run."""

from __future__ import annotations

import pytest

from flows.evaluation import evaluate
from schemas.config import load_settings
from tasks.query.tools.registry import GRAPH_TOOLS
from tasks.tables.io import read_frame
from tests.conftest import SAMPLES

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


def run(workspace, **answer):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}, "answer": answer})
    report = evaluate(workspace, QUESTIONS, settings, fresh=True)
    traces = read_frame(workspace, "qa_traces", report.run_id)
    kinds = {k for row in traces["kinds"] for k in row}
    return report, traces, kinds


@pytest.fixture(scope="module")
def full(sample_workspace):
    return run(sample_workspace)


def test_the_full_system_reaches_every_component(full):
    report, traces, kinds = full
    assert {"episode", "storyline", "attribute", "profile", "fact", "entity", "relation"} <= kinds
    assert set(traces["tool"]) & GRAPH_TOOLS and report.rows["skills"].map(len).sum() > 0
    assert traces["round"].max() >= 1  # the offline planner does use follow-up rounds here


def test_no_hierarchy_removes_every_route_to_episodes_and_storylines(sample_workspace, full):
    report, traces, kinds = run(sample_workspace, hierarchy=False)
    assert not kinds & {"episode", "storyline"}
    # narrative_trace_search still runs, on the units alone; the units carry no episode id either.
    assert "event" in kinds or "interaction" in kinds
    assert report.run_id != full[0].run_id


def test_no_attributes_hides_attributes_and_profiles_but_keeps_facts(sample_workspace):
    _, _, kinds = run(sample_workspace, attributes=False)
    assert not kinds & {"attribute", "profile"}
    assert {"fact", "entity"} <= kinds


def test_no_graph_tools_calls_no_graph_tool(sample_workspace):
    _, traces, kinds = run(sample_workspace, graph_tools=False)
    assert not set(traces["tool"]) & GRAPH_TOOLS
    assert not kinds & {"entity", "relation", "attribute", "profile"}
    assert "fact" in kinds  # atomic facts are a text-channel tool


def test_no_reading_skills_applies_none(sample_workspace):
    report, traces, _ = run(sample_workspace, reading_skills=False)
    assert report.rows["skills"].map(len).sum() == 0
    assert len(traces)


@pytest.mark.parametrize("depth", [0, 1])
def test_follow_up_depth_bounds_the_rounds(sample_workspace, depth):
    _, traces, _ = run(sample_workspace, follow_up_rounds=depth)
    assert traces["round"].max() <= depth
