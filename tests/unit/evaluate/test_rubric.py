"""The rubric judge's pure parts: the prompt (every reference in the user part, nothing of the
document in the system part), the fixed reply schema, the per-answer medians over votes, the run's
figures per question type, and that the correctness protocol leaves rubric votes out."""

from __future__ import annotations

import json
from statistics import mean, median

import pandas as pd

from schemas.responses.judge import RUBRIC_SCALE, RubricReply
from tasks.evaluate.judge import JudgeItem
from tasks.evaluate.protocol import correctness, summarize_protocol
from tasks.evaluate.rubric import (
    RUBRIC_CRITERIA,
    RUBRIC_METRICS,
    RUBRIC_PROMPT,
    rubric_line,
    rubric_metric_rows,
    rubric_requests,
    rubric_scores,
    summarize_rubric,
)
from tasks.llm.client.replies import response_schema
from tasks.llm.requests.prompts import PLACEHOLDER, PROMPTS_DIR, SECTION_MARK

REFERENCES = (
    "Margaret gives her brother the key; Ellis hides the storm warning.",
    "The keeper's brother hides the key, the harbour master locks the warning away, Nia finds it.",
)


def _item(language: str = "en") -> JudgeItem:
    return JudgeItem(
        "bench", "q1", "doc", 0, "What is the plot of the story?", "Tom hides the key.", REFERENCES[0],
        language, references=REFERENCES, rubric=True,
    )  # fmt: skip


def test_every_reference_goes_in_the_user_part_and_nothing_of_the_document_in_the_system_part():
    for language in ("en", "zh"):
        requests = rubric_requests(_item(language), votes=3, temperature=0.7)
        assert [r.seed for r in requests] == [0, 1, 2] and {r.prompt_id for r in requests} == {RUBRIC_PROMPT}
        system, user = requests[0].messages
        assert system["role"] == "system" and user["role"] == "user"
        for value in (*REFERENCES, "Tom hides the key.", "What is the plot of the story?"):
            assert value not in system["content"] and value in user["content"]
        assert "[1] Margaret" in user["content"] and "[2] The keeper's" in user["content"]
    # The files themselves: a system part without placeholders is the same bytes for every request.
    for path in sorted((PROMPTS_DIR / RUBRIC_PROMPT.split("/")[0]).glob("v1*.md")):
        parts = SECTION_MARK.split(path.read_text(encoding="utf-8"))
        system_part = parts[parts.index("system") + 1]
        assert PLACEHOLDER.findall(system_part) == [], path.name


def test_the_reply_schema_is_fixed_three_criteria_each_a_bounded_integer_and_a_reason():
    name, sent, fields = response_schema(RubricReply)
    schema = json.loads(sent)
    assert name == "RubricReply" and RUBRIC_CRITERIA == ("coverage", "faithfulness", "coherence")
    assert schema["additionalProperties"] is False and sorted(schema["required"]) == sorted(RUBRIC_CRITERIA)
    criterion = RubricReply.model_json_schema()["$defs"]["CriterionScore"]
    assert criterion["properties"]["score"]["type"] == "integer"
    assert (
        criterion["properties"]["score"]["minimum"],
        criterion["properties"]["score"]["maximum"],
    ) == RUBRIC_SCALE
    assert all(f"- {c}:" in fields for c in RUBRIC_CRITERIA)


def _vote(qid: str, vote: int, scores: dict[str, int] | None, status: str = "ok") -> dict:
    rubric = (
        None if scores is None else [{"criterion": c, "score": s, "reason": "r"} for c, s in scores.items()]
    )
    return {
        "qid": qid,
        "sample": 0,
        "vote": vote,
        "kind": "rubric",
        "label": None,
        "rubric": rubric,
        "status": status,
    }


def _label(qid: str, vote: int, label: bool) -> dict:
    return {
        "qid": qid,
        "sample": 0,
        "vote": vote,
        "kind": "label",
        "label": label,
        "rubric": None,
        "status": "ok",
    }


# Votes as (coverage, faithfulness, coherence) scores, in RUBRIC_CRITERIA's order.
VOTES = {"plot": [(2, 5, 4), (4, 4, 4), (3, 2, 5)], "role": [(1, 3, 2), (5, 3, 2)]}


def _judgments() -> pd.DataFrame:
    rows = [
        _vote(q, v, dict(zip(RUBRIC_CRITERIA, s))) for q, votes in VOTES.items() for v, s in enumerate(votes)
    ]
    rows.append(_vote("role", 2, None, status="failed"))  # casts no vote
    rows += [_label("short", v, label) for v, label in enumerate([True, True, False])]
    return pd.DataFrame(rows)


def _answers() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "qid": ["plot", "role", "short"], "sample": [0, 0, 0], "status": ["answered"] * 3,
            "qtype": ["plot", "character", "detail"], "gold_option": [None] * 3,
            "is_correct_option": [None] * 3, "is_offline": [True] * 3,
        }
    )  # fmt: skip


def _expected(qid: str) -> dict[str, float]:
    medians = {c: median(v[i] for v in VOTES[qid]) for i, c in enumerate(RUBRIC_CRITERIA)}
    low, high = RUBRIC_SCALE
    return {**medians, "score": mean((m - low) / (high - low) for m in medians.values())}


def test_each_answer_scores_the_median_of_its_votes_and_failed_votes_cast_none():
    scores = rubric_scores(_judgments()).set_index("qid")
    assert sorted(scores.index) == ["plot", "role"]  # the label question is not here
    assert scores.loc["role", "votes"] == 2
    for qid in VOTES:
        for column, value in _expected(qid).items():
            assert scores.loc[qid, column] == value, (qid, column)


def test_the_run_figures_are_means_over_the_judged_answers_and_per_question_type():
    summary = summarize_rubric(_answers(), _judgments())
    assert summary["judged_answers"] == 2 and summary["scale"] == "1-5"
    for column in (*RUBRIC_CRITERIA, "score"):
        assert summary[column] == round(mean(_expected(q)[column] for q in VOTES), 4)
    rows = rubric_metric_rows("run", "bench", "nkw", _answers(), _judgments())
    by = {(r["qtype"], r["metric"]): r for r in rows}
    assert {q for q, _ in by} == {"*", "plot", "character"}  # no rubric figures for the short question
    assert {m for _, m in by} == set(RUBRIC_METRICS)
    assert by[("plot", "rubric_coverage")]["value"] == _expected("plot")["coverage"]
    assert by[("*", "rubric_judged_answers")]["value"] == 2 and by[("*", "rubric_score")]["n"] == 2
    line = rubric_line(summary)
    assert "2 judged" in line and f"coverage {summary['coverage']:.3g}/5" in line
    assert (
        rubric_metric_rows("run", "bench", "nkw", _answers(), _judgments()[lambda f: f.kind == "label"]) == []
    )


def test_the_correctness_protocol_counts_label_votes_only():
    labelled = correctness(_answers(), _judgments())
    assert labelled.set_index("qid")["correct_source"].to_dict() == {
        "plot": "none",
        "role": "none",
        "short": "judge",
    }
    protocol = summarize_protocol(labelled, _judgments(), samples=1)
    assert protocol["judged_answers"] == 1 and protocol["overall"] == 1.0  # two of three votes: correct
