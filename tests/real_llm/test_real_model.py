"""A short screenplay built through every LLM stage by a real model, one question answered through the
agent and judged. Only what must hold with any model is asserted: the build finishes and says
honestly what it lost, every item asked is a row or a `failures` row, and the answer comes from the
model and cites a scene of the document."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from flows.stages import STAGES
from tasks.tables.io import Workspace, read_frame
from tests.real_llm.conftest import CONFIG, QUESTIONS, SCREENPLAY, nkw

# extract_narrative and extract_facts read extract_graph's combined replies and ask nothing.
ASKING_STAGES = {s.name for s in STAGES if s.uses_llm} - {"extract_narrative", "extract_facts"}
DONE = ("ok", "cached", "salvaged")  # salvaged: cut at its limit, its complete items kept


def _llm_args(server) -> list[str]:
    return ["--config", str(CONFIG), "--llm-url", server.url, "--model", server.options.alias]


@pytest.fixture(scope="module")
def built(local_server, tmp_path_factory):
    workspace = Workspace.at(tmp_path_factory.mktemp("real-llm") / "ws")
    done = nkw(
        "build", "build", str(SCREENPLAY), "-w", str(workspace.root), "--no-prefect", "--json",
        *_llm_args(local_server),
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr[-2000:]
    return workspace, done.returncode, json.loads(done.stdout)


@pytest.fixture(scope="module")
def evaluated(built, local_server):
    workspace = built[0]
    done = nkw(
        "answer and judge", "eval", "-w", str(workspace.root), "--questions", str(QUESTIONS), "--no-prefect",
        "--json", *_llm_args(local_server),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return workspace, json.loads(done.stdout)


def _first_item(calls: pd.DataFrame) -> pd.Series:
    # A request carrying several items is logged as "<first>+<n>"; asked again it carries a retry tag
    # ("#again", "#split", "#alone" for a pack's chunk asked alone, or "#rest", "#rest2"… for the
    # lists a cut pack's reply never reached).
    return calls["item_id"].str.replace(r"(#again|#split|#alone|#rest\d*)?(\+\d+)?$", "", regex=True)


def test_the_build_finishes_and_its_exit_code_matches_what_it_lost(built):
    workspace, code, report = built
    stages = [s for d in report["documents"] for s in d["stages"]]
    assert {s["stage"] for s in stages} >= ASKING_STAGES
    failures = read_frame(workspace, "failures")
    lost = report["lost_items"] + report["partial"] + report["failed"] + len(report["ingest_failures"])
    if code == 0:
        assert lost == 0 and failures.empty, (report, failures)
    else:
        assert lost > 0, report
    for stage in stages:  # a stage with quarantined items never says "built"
        quarantined = int((failures["stage"] == stage["stage"]).sum()) if not failures.empty else 0
        if quarantined:
            assert stage["status"] in ("partial", "failed"), stage


def test_every_asking_stage_reached_the_real_model(built, local_server):
    workspace = built[0]
    calls = read_frame(workspace, "llm_calls")
    assert calls["model"].eq(local_server.options.alias).all()
    answered = calls[calls["status"].isin(DONE)]
    assert answered["prompt_tokens"].gt(0).all() and answered["completion_tokens"].gt(0).all()
    asked = set(calls["stage"])
    # A stage may have nothing to ask (no cycle, no continuity chain, nothing extracted upstream), but
    # the extraction always asks, and narrative units extracted always become episodes to describe.
    assert "extract_graph" in asked and asked <= ASKING_STAGES, asked
    if not read_frame(workspace, "raw_units").empty:
        assert "assemble_episodes" in asked


def test_every_item_asked_is_a_row_or_a_failures_row(built):
    workspace = built[0]
    calls = read_frame(workspace, "llm_calls")
    failures = read_frame(workspace, "failures")
    quarantined = set(zip(failures["stage"], failures["item_id"])) if not failures.empty else set()
    outcome = calls.assign(item=_first_item(calls)).groupby(["stage", "item"])["status"]
    lost = [key for key, statuses in outcome if not statuses.isin(DONE).any() and key not in quarantined]
    assert lost == [], lost
    if not read_frame(workspace, "raw_entities").empty:  # extraction answered: the graph is built on it
        assert not read_frame(workspace, "entities").empty


def test_the_answer_comes_from_the_model_cites_a_scene_and_is_judged(evaluated):
    workspace, report = evaluated
    assert report["n_questions"] == 1 and report["offline"] is False
    answer = read_frame(workspace, "qa_answers").iloc[0]
    assert answer["status"] == "answered" and not answer["is_offline"] and answer["answer"].strip()
    headings = set(read_frame(workspace, "sections")["heading"].fillna(""))
    cited = list(answer["cited_headings"])
    assert cited and set(cited) <= headings, (cited, headings)
    assert answer["tool_calls"] > 0  # the agent searched the bundle before answering
    votes = read_frame(workspace, "judgments")
    assert len(votes) == 1 and votes.iloc[0]["status"] in DONE and votes.iloc[0]["label"] in (True, False)
