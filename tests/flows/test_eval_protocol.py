"""The paper's evaluation protocol against the test OpenAI server as answerer and judge:
five genuinely sampled answers per question, five stochastic votes per answer, majority labels,
Overall / Pass@5 and an alpha that matches the `krippendorff` package."""

from __future__ import annotations

import hashlib
import json
import re

import krippendorff
import numpy as np
import pytest

from flows.answer_questions import QueryEngine
from flows.evaluation.evaluate import evaluate, format_report
from schemas.config import load_settings
from tasks.llm.client.factory import build_llm_client
from tasks.tables.io import read_frame
from tests.conftest import SAMPLES
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer
from tests.fixtures.reader_replies import is_final_answer, shaped

QUESTIONS = SAMPLES / "the_lighthouse_key.questions.jsonl"


@pytest.fixture(scope="module")
def workspace(sample_workspace, tmp_path_factory):
    """A private copy of the sample workspace: evaluation runs write tables into it."""
    import shutil

    from tasks.tables.io import Workspace

    root = tmp_path_factory.mktemp("eval") / "ws"
    shutil.copytree(sample_workspace.root, root)
    return Workspace.at(root)


JUDGE_MODEL = "judge-model"
DISAGREE = 0.25  # share of judge votes that go against the judge's own majority view


def _draw(*parts: object) -> float:
    return int(hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:8], 16) / 2**32


def responder(body):
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
    user = body["messages"][-1]["content"]
    if is_final_answer(body):  # the answer depends on the sample's seed, as sampling would
        seed = body.get("seed")
        # words of the first passage, so the answer is one the reader keeps (tasks.query.reader.checks)
        passage = re.search(r"^\[\d+\][^\n]*\n([^\n]+)", user, re.MULTILINE)
        told = " ".join(passage.group(1).split()[:4]) if passage else ""
        reply = {
            "answer": f"{told} (sample {seed} {_draw(user, seed):.6f})",
            "chosen_option": None,
            "cited_ordinals": [],
            "quotes": [],
            "confidence": 0.5,
        }
        return shaped(body, reply)
    if name == "JudgeReply":
        assert body["model"] == JUDGE_MODEL
        answer = user.split("System answer:")[1].split("Reference answer:")[0]
        view = _draw("view", answer) < 0.5  # the judge's settled view of this answer
        flipped = _draw("vote", answer, body.get("seed")) < DISAGREE
        return {"is_correct": view != flipped, "reason": "compared with the reference"}
    return None


@pytest.fixture
def servers():
    with (
        FakeOpenAIServer(model_names=(TEST_MODEL,), responder=responder) as answerer,
        FakeOpenAIServer(model_names=(JUDGE_MODEL,), responder=responder) as judge,
    ):
        yield answerer, judge


def test_five_samples_five_votes_and_alpha(servers, workspace, tmp_path):
    answerer, judge_server = servers
    settings = load_settings(
        overrides={
            "embed_texts": {"backend": "hashing"},
            "llm": {
                "url": answerer.url,
                "model": TEST_MODEL,
                "timeout_s": 5,
                "deadline_s": 20,
                "max_tokens": 256,
                "backoff_s": 0.01,
            },
            "evaluate": {
                "judge_url": judge_server.url,
                "judge_model": JUDGE_MODEL,
                "sample_temperature": 0.8,
                "judge_temperature": 0.9,
            },
        }
    )
    llm = build_llm_client(settings.llm, None, workspace.cache_dir / "llm")
    from flows.evaluation.judging import judge_client

    judge = judge_client(settings, None, workspace)
    engine = QueryEngine(workspace, settings, llm=llm)
    report = evaluate(
        workspace, QUESTIONS, settings, samples=5, limit=4, engine=engine, judge=judge, fresh=True
    )

    answers = report.rows
    free = answers[answers["gold_option"].isna()]
    assert set(answers["sample"]) == set(range(5))
    for _, group in free.groupby("qid"):
        assert group["answer"].nunique() == 5  # five genuinely different samples, no cached repeat
    finals = [r.body for r in answerer.chat_requests() if is_final_answer(r.body)]
    assert {r["seed"] for r in finals} == set(range(5)) and {r["temperature"] for r in finals} == {0.8}

    votes = read_frame(workspace, "judgments", report.run_id)
    assert len(votes) == 5 * len(free)  # five votes per free-form sample, none for multiple choice
    assert set(votes["vote"]) == set(range(5)) and set(votes["judge_model"]) == {JUDGE_MODEL}
    judged = [r.body for r in judge_server.chat_requests()]
    assert {r["temperature"] for r in judged} == {0.9} and {r["seed"] for r in judged} == set(range(5))
    items = [list(g.sort_values("vote")["label"]) for _, g in votes.groupby(["qid", "sample"])]
    assert any(len(set(item)) == 2 for item in items)  # the configured disagreement shows
    expected = krippendorff.alpha(
        reliability_data=np.array(items, dtype=float).T, level_of_measurement="nominal"
    )
    assert report.protocol["judge_alpha"] == pytest.approx(round(expected, 4), abs=1e-4)
    assert report.protocol["pass_at_k"] is not None and report.protocol["k"] == 5
    assert report.protocol["pass_at_k"] >= report.protocol["overall"]
    metrics = read_frame(workspace, "eval_metrics", report.run_id)
    assert {"overall", "pass_at_k", "judge_alpha", "judge_pairwise_agreement"} <= set(metrics["metric"])

    # Resume: a second run reuses the stored answers and votes; no request reaches either server.
    answerer.reset()
    judge_server.reset()
    again = evaluate(workspace, QUESTIONS, settings, samples=5, limit=4, engine=engine, judge=judge)
    assert again.run_id == report.run_id and not answerer.chat_requests() and not judge_server.chat_requests()
    assert again.protocol == report.protocol
    assert any("resumed" in note for note in again.notes)
    llm.close()
    judge.close()


def test_offline_samples_report_pass_at_k_as_not_applicable(workspace):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    report = evaluate(workspace, QUESTIONS, settings, samples=2, limit=3, fresh=True)
    assert report.protocol["offline"] is True and report.protocol["pass_at_k"] is None
    assert any("Pass@k is not applicable" in note for note in report.notes)
    # Only the multiple-choice question is scored without a judge: by option match.
    assert report.protocol["overall_source"] == "option_match"
    all_row = next(line for line in format_report(report).splitlines() if line.startswith("ALL "))
    assert all_row.split()[1] == "3"  # questions, not question × sample rows
