"""Whole-story questions judged with the rubric, against the test OpenAI server as the judge: the
plot question's long answer is scored on every criterion by every vote (all of its references in the
prompt, none of the document in the system part, the fixed reply schema), a short free-form answer
still gets the correct/incorrect label, the scores land in `judgments` and their medians in
`eval_metrics` and the printed report, and a second run reuses every stored vote."""

from __future__ import annotations

import json
import shutil
from statistics import mean, median

import pytest

from flows.evaluation.evaluate import evaluate, format_report
from flows.evaluation.judging import judge_client
from schemas.config import load_settings
from schemas.responses.judge import RUBRIC_SCALE
from tasks.evaluate.rubric import RUBRIC_CRITERIA, RUBRIC_STAGE
from tasks.tables.io import Workspace, as_list, read_frame
from tests.conftest import SAMPLES
from tests.fixtures.openai_server import FakeOpenAIServer

DOC = "the_lighthouse_key"
JUDGE_MODEL = "judge-model"
VOTES = 3
REFERENCES = [
    "Margaret Hale, the keeper of a lighthouse that is to be sold, gives her brother Tom the brass key of "
    "the lamp cabinet. Ellis Crowe, the harbour master, locks away a storm warning so that a cruise and "
    "the sale go ahead. Nia finds the warning, and the lamp is lit in time for the boat.",
    "A lighthouse keeper hides the key of her lamp from the buyers; the harbour master hides the gale "
    "warning. When the storm comes, Nia and Tom bring the key back and Margaret lights the old lamp, "
    "and Daniel's boat is brought in.",
]


def _schema_name(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def rubric_vote(body: dict) -> dict:
    """The fake judge's rubric reply: coverage and faithfulness move with the vote's seed, coherence
    counts the references the prompt numbered (so a reference left out would show)."""
    seed, user = int(body["seed"]), body["messages"][-1]["content"]
    numbered = sum(f"[{n}] " in user for n in range(1, 10))
    scores = {"coverage": 2 + seed, "faithfulness": 5 - seed, "coherence": 1 + numbered}
    return {c: {"score": scores[c], "reason": f"{c} of vote {seed}"} for c in RUBRIC_CRITERIA}


def responder(body: dict) -> dict | None:
    if _schema_name(body) == "RubricReply":
        return rubric_vote(body)
    if _schema_name(body) == "JudgeReply":
        return {"is_correct": True, "reason": "matches the reference"}
    return None


@pytest.fixture(scope="module")
def workspace(sample_workspace, tmp_path_factory) -> Workspace:
    """A private copy of the sample workspace: evaluation runs write tables into it."""
    root = tmp_path_factory.mktemp("rubric") / "ws"
    shutil.copytree(sample_workspace.root, root)
    return Workspace.at(root)


@pytest.fixture
def questions(tmp_path):
    """The plot question with two written references, and two questions of the bundled sample file:
    a short free-form one and a multiple-choice one."""
    lines = (SAMPLES / f"{DOC}.questions.jsonl").read_text(encoding="utf-8").splitlines()
    sample = [json.loads(line) for line in lines]
    short = next(q for q in sample if not q["options"])
    choice = next(q for q in sample if q["options"])
    plot = {
        "qid": "lighthouse-plot", "doc_id": DOC, "question": "What is the plot of the story?",
        "answer": REFERENCES[0], "options": None, "gold_option": None, "qtype": "plot",
        "meta": {"references": REFERENCES, "language": "en"},
    }  # fmt: skip
    path = tmp_path / "whole_story.questions.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in (plot, short, choice)) + "\n", encoding="utf-8")
    return path, short["qid"]


def test_the_plot_answer_is_scored_with_the_rubric_and_a_short_one_labelled(workspace, questions):
    path, short_qid = questions
    with FakeOpenAIServer(model_names=(JUDGE_MODEL,), responder=responder) as server:
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "evaluate": {"judge_url": server.url, "judge_model": JUDGE_MODEL, "judge_votes": VOTES},
            }
        )
        judge = judge_client(settings, None, workspace)
        report = evaluate(workspace, path, settings, judge=judge, fresh=True)
        sent = [r.body for r in server.chat_requests()]
        server.reset()
        again = evaluate(workspace, path, settings, judge=judge)
        assert not server.chat_requests()  # every vote reused
        judge.close()

    rubric_bodies = [b for b in sent if _schema_name(b) == "RubricReply"]
    label_bodies = [b for b in sent if _schema_name(b) == "JudgeReply"]
    assert len(rubric_bodies) == VOTES and len(label_bodies) == VOTES  # none for multiple choice
    answer = report.rows.set_index("qid").loc["lighthouse-plot", "answer"]
    assert len(answer.split()) > 40  # a whole-story question gets a paragraph to judge
    for body in rubric_bodies:
        system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
        for text in (*REFERENCES, answer):
            assert text not in system and " ".join(text.split()) in user
        schema = body["response_format"]["json_schema"]["schema"]
        assert sorted(schema["required"]) == sorted(RUBRIC_CRITERIA) and not schema["additionalProperties"]

    votes = read_frame(workspace, "judgments", report.run_id)
    rubric = votes[votes["kind"] == "rubric"].sort_values("vote")
    assert set(rubric["qid"]) == {"lighthouse-plot"} and rubric["label"].isna().all()
    stored = [{s["criterion"]: s["score"] for s in as_list(r)} for r in rubric["rubric"]]
    expected_votes = [{c: v["score"] for c, v in rubric_vote(b).items()} for b in rubric_bodies]
    assert sorted(stored, key=lambda s: s["coverage"]) == sorted(expected_votes, key=lambda s: s["coverage"])
    assert {s["coherence"] for s in stored} == {1 + len(REFERENCES)}  # both references were sent
    labels = votes[votes["kind"] == "label"]
    assert set(labels["qid"]) == {short_qid} and labels["label"].all() and labels["rubric"].isna().all()

    medians = {c: median(v[c] for v in stored) for c in RUBRIC_CRITERIA}
    low, high = RUBRIC_SCALE
    score = mean((m - low) / (high - low) for m in medians.values())
    metrics = read_frame(workspace, "eval_metrics", report.run_id)
    figures = {(r.qtype, r.metric): r.value for r in metrics.itertuples()}
    for qtype in ("*", "plot"):
        assert figures[(qtype, "rubric_judged_answers")] == 1
        for criterion, value in medians.items():
            assert figures[(qtype, f"rubric_{criterion}")] == value
        assert figures[(qtype, "rubric_score")] == pytest.approx(score, abs=1e-4)
    assert not any(m.startswith("rubric_") for q, m in figures if q not in ("*", "plot"))
    # The correctness protocol counts the label votes only: one judged answer, plus the option match.
    assert figures[("*", "judged_answers")] == 1 and report.protocol["overall_source"] == "judge+option_match"

    assert (
        report.rubric["judged_answers"] == 1
        and report.rubric["by_qtype"]["plot"]["coverage"] == medians["coverage"]
    )
    line = next(line for line in format_report(report).splitlines() if line.startswith("Rubric"))
    assert f"coverage {medians['coverage']:.3g}/{high}" in line and f"score {score:.3g}" in line
    assert again.rubric == report.rubric and again.protocol == report.protocol
    calls = read_frame(workspace, "llm_calls", DOC)
    assert (calls["stage"] == RUBRIC_STAGE).sum() == VOTES
