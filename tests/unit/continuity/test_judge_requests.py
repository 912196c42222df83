"""judge_continuity's grouped requests (prompt v2): every asked candidate in exactly one request,
groups bounded by `max_candidates_per_request` and the token budget, each scene packet written
once per request and each pair numbered in request order; Chinese labels for Chinese documents."""

from __future__ import annotations

import pytest

from schemas.config import ContinuitySettings
from tasks.continuity.judge_requests import PROMPT_ID, judge_requests
from tasks.continuity.scenes import scene_graph
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.tables.io import read_frame

DOC = "the_lighthouse_key"
TABLES = ("sections", "entities", "mentions", "occasions", "events", "interactions", "atomic_facts")


@pytest.fixture(scope="module")
def graph_and_candidates(sample_workspace):
    tables = {name: read_frame(sample_workspace, name, DOC) for name in TABLES}
    candidates = read_frame(sample_workspace, "continuity_candidates", DOC)
    assert len(candidates) >= 4
    return scene_graph(DOC, tables), candidates.to_dict("records")


@pytest.mark.parametrize("per_request", [1, 3, 32])
def test_every_candidate_is_asked_once_in_bounded_groups(graph_and_candidates, per_request):
    graph, candidates = graph_and_candidates
    settings = ContinuitySettings(max_candidates_per_request=per_request)
    plan = judge_requests(graph, candidates, "en", settings)
    flat = [i for g in plan.groups for i in g]
    assert sorted(flat) == sorted(str(c["candidate_id"]) for c in candidates)
    assert all(1 <= len(g) <= per_request for g in plan.groups)
    if per_request == 1:
        assert len(plan.groups) == len(candidates)
    else:
        assert len(plan.groups) < len(candidates)


def test_a_request_shows_each_scene_once_and_numbers_its_pairs(graph_and_candidates):
    graph, candidates = graph_and_candidates
    plan = judge_requests(graph, candidates, "en", ContinuitySettings())
    group = max(plan.groups, key=len)
    values = plan.values(group, "The Lighthouse Key")
    scenes = {s for i in group for s in (plan.candidates[i]["scene_a"], plan.candidates[i]["scene_b"])}
    for section_id in scenes:
        assert values["scenes"].count(f"[{plan.labels[section_id]}] ") == 1
    lines = [line for line in values["pairs"].splitlines() if line[:1].isdigit()]
    for number, (line, candidate_id) in enumerate(zip(lines, group), 1):
        candidate = plan.candidates[candidate_id]
        expected = f"{number}. {plan.labels[candidate['scene_a']]} and {plan.labels[candidate['scene_b']]}"
        assert line == expected
    messages = render_messages(load_prompt(PROMPT_ID, "en"), values)
    assert messages[0]["role"] == "system" and "{{" not in messages[-1]["content"]
    assert "The Lighthouse Key" not in messages[0]["content"]  # instructions first, the same every request


def test_a_small_budget_splits_requests(graph_and_candidates):
    graph, candidates = graph_and_candidates
    wide = judge_requests(graph, candidates, "en", ContinuitySettings(pack_tokens=100_000))
    narrow = judge_requests(graph, candidates, "en", ContinuitySettings(pack_tokens=1))
    assert len(wide.groups) < len(narrow.groups) == len(candidates)


def test_chinese_documents_get_chinese_labels(graph_and_candidates):
    graph, candidates = graph_and_candidates
    plan = judge_requests(graph, candidates, "zh", ContinuitySettings())
    values = plan.values(plan.groups[0], "灯塔钥匙")
    assert values["pairs"].startswith("1. 第") and " 与 第" in values["pairs"]
    assert "[第" in values["scenes"] and "证据：" in values["scenes"]
    assert render_messages(load_prompt(PROMPT_ID, "zh"), values)[0]["content"].startswith("你为制片团队")


def test_packets_do_not_depend_on_the_grouping(graph_and_candidates):
    graph, candidates = graph_and_candidates
    one = judge_requests(graph, candidates, "en", ContinuitySettings(max_candidates_per_request=1))
    many = judge_requests(graph, candidates, "en", ContinuitySettings())
    scenes = {s for c in candidates for s in (c["scene_a"], c["scene_b"])}
    assert len(one.groups) > len(many.groups)
    assert [one.packet(s) for s in sorted(scenes)] == [many.packet(s) for s in sorted(scenes)]
    ids = [str(c["candidate_id"]) for c in candidates]
    assert [one.shared(i) for i in ids] == [many.shared(i) for i in ids]


def test_the_first_group_comes_before_every_packet_is_rendered(graph_and_candidates):
    # The stage sends its first request once that group is formed, not after the whole document.
    graph, candidates = graph_and_candidates
    plan = judge_requests(graph, candidates, "en", ContinuitySettings(max_candidates_per_request=1))
    first = next(plan.iter_groups())
    scenes = {s for c in candidates for s in (c["scene_a"], c["scene_b"])}
    assert 0 < len(plan._packets) < len(scenes)  # only the packets the first groups needed
    assert first == plan.groups[0] and len(plan._packets) == len(scenes)
