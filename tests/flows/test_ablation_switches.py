"""Each query-time ablation switch removes one component, and only that one: asserted from the
`qa_traces` (what every tool call returned) and `qa_answers` of an offline evaluation run."""

from __future__ import annotations

import pytest

from flows.evaluation.evaluate import evaluate
from schemas.config import load_settings
from tasks.query.tools.registry import GRAPH_TOOLS
from tasks.tables.io import read_frame
from tests.conftest import SAMPLES

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


@pytest.fixture(scope="module")
def workspace(sample_workspace, tmp_path_factory):
    """A private copy of the sample workspace: evaluation runs write tables into it."""
    import shutil

    from tasks.tables.io import Workspace

    root = tmp_path_factory.mktemp("eval") / "ws"
    shutil.copytree(sample_workspace.root, root)
    return Workspace.at(root)


def run(workspace, **answer):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}, "answer": answer})
    report = evaluate(workspace, QUESTIONS, settings, fresh=True)
    traces = read_frame(workspace, "qa_traces", report.run_id)
    kinds = {k for row in traces["kinds"] for k in row}
    return report, traces, kinds


@pytest.fixture(scope="module")
def full(workspace):
    return run(workspace)


def test_the_full_system_reaches_every_component(full):
    report, traces, kinds = full
    assert {"episode", "storyline", "attribute", "profile", "fact", "entity", "relation"} <= kinds
    assert set(traces["tool"]) & GRAPH_TOOLS and report.rows["skills"].map(len).sum() > 0
    assert traces["round"].max() >= 1  # the offline planner does use follow-up rounds here


def test_no_hierarchy_removes_every_route_to_episodes_and_storylines(workspace, full):
    report, traces, kinds = run(workspace, hierarchy=False)
    assert not kinds & {"episode", "storyline"}
    # narrative_trace_search still runs, on the units alone; the units carry no episode id either.
    assert "event" in kinds or "interaction" in kinds
    assert report.run_id != full[0].run_id


def test_no_attributes_hides_attributes_and_profiles_but_keeps_facts(workspace):
    _, _, kinds = run(workspace, attributes=False)
    assert not kinds & {"attribute", "profile"}
    assert {"fact", "entity"} <= kinds


def test_no_graph_tools_calls_no_graph_tool(workspace):
    _, traces, kinds = run(workspace, graph_tools=False)
    assert not set(traces["tool"]) & GRAPH_TOOLS
    assert not kinds & {"entity", "relation", "attribute", "profile"}
    assert "fact" in kinds  # atomic facts are a text-channel tool


def test_no_reading_skills_applies_none(workspace):
    report, traces, _ = run(workspace, reading_skills=False)
    assert report.rows["skills"].map(len).sum() == 0
    assert len(traces)


@pytest.mark.parametrize("depth", [0, 1])
def test_follow_up_depth_bounds_the_rounds(workspace, depth):
    _, traces, _ = run(workspace, follow_up_rounds=depth)
    assert traces["round"].max() <= depth
