"""The paper's headline figures from stored rows (paper §4): per answer a correctness label
(option match for multiple choice, the judge's majority for free-form answers), then Overall
(mean correctness of sample 0), Pass@k (any of k sampled answers correct) and judge agreement.

Offline answers are deterministic, so k samples are one answer k times: Pass@k is reported as not
applicable (None), never as a number. Rubric votes on whole-story answers carry no label: they are
left out here and summarized by tasks.evaluate.rubric."""

from __future__ import annotations

import re
from typing import Any

import pandas as pd

from tasks.evaluate.agreement import krippendorff_alpha_nominal, majority, pairwise_agreement

PROTOCOL_METRICS = ("overall", "pass_at_k", "judged_answers", "judge_pairwise_agreement", "judge_alpha")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def language_of(text: str) -> str:
    return "zh" if _CJK.search(text or "") else "en"


def label_votes(judgments: pd.DataFrame | None) -> pd.DataFrame | None:
    """The correct/incorrect votes of `judgments` (a run stored before rubric votes has only those)."""
    if judgments is None or judgments.empty or "kind" not in judgments:
        return judgments
    return judgments[judgments["kind"].fillna("label") == "label"]


def correctness(answers: pd.DataFrame, judgments: pd.DataFrame | None) -> pd.DataFrame:
    """`answers` with `correct` (True/False/None) and `correct_source` (option_match | judge | none)."""
    frame = answers.copy()
    judgments = label_votes(judgments)
    majorities: dict[tuple[str, int], bool | None] = {}
    if judgments is not None and not judgments.empty:
        for (qid, sample), group in judgments.groupby(["qid", "sample"]):
            labels = [None if pd.isna(v) else bool(v) for v in group.sort_values("vote")["label"]]
            majorities[(str(qid), int(sample))] = majority(labels)
    correct, source = [], []
    for row in frame.itertuples():
        if row.status != "answered":
            correct.append(None)
            source.append("none")
        elif row.gold_option is not None and not pd.isna(row.gold_option):
            correct.append(None if pd.isna(row.is_correct_option) else bool(row.is_correct_option))
            source.append("option_match")
        elif (row.qid, int(row.sample)) in majorities and majorities[(row.qid, int(row.sample))] is not None:
            correct.append(majorities[(row.qid, int(row.sample))])
            source.append("judge")
        else:
            correct.append(None)
            source.append("none")
    frame["correct"] = pd.array(correct, dtype="boolean")
    frame["correct_source"] = source
    return frame


def vote_items(judgments: pd.DataFrame) -> list[list[bool | None]]:
    """The votes of each judged (question, sample), for agreement figures."""
    if judgments is None or judgments.empty:
        return []
    return [
        [None if pd.isna(v) else bool(v) for v in group.sort_values("vote")["label"]]
        for _, group in judgments.groupby(["qid", "sample"])
    ]


def summarize_protocol(frame: pd.DataFrame, judgments: pd.DataFrame | None, samples: int) -> dict[str, Any]:
    """Overall, Pass@k and agreement over `frame` (rows from `correctness`) and its judgments."""
    answered = frame[frame["status"] == "answered"]
    first = answered[answered["sample"] == 0]
    labelled = first["correct"].dropna()
    overall = round(float(labelled.astype(float).mean()), 4) if len(labelled) else None
    offline = bool(answered["is_offline"].fillna(True).all()) if len(answered) else True
    pass_at_k = None
    if samples > 1 and not offline:
        per_question = (
            answered.dropna(subset=["correct"]).groupby("qid")["correct"].agg(lambda s: bool(s.any()))
        )
        pass_at_k = round(float(per_question.astype(float).mean()), 4) if len(per_question) else None
    judgments = label_votes(judgments)
    if judgments is not None and not judgments.empty:
        judgments = judgments[judgments["qid"].isin(set(answered["qid"]))]
    items = vote_items(judgments) if judgments is not None else []
    agreement = pairwise_agreement(items)
    alpha = krippendorff_alpha_nominal(items)
    sources = sorted(set(first["correct_source"]) - {"none"})
    return {
        "overall": overall,
        "overall_source": "+".join(sources) or "none",
        "pass_at_k": pass_at_k,
        "k": samples,
        "offline": offline,
        "judged_answers": len(items),
        "judge_pairwise_agreement": None if agreement is None else round(agreement, 4),
        "judge_alpha": None if alpha is None else round(alpha, 4),
    }


def protocol_metric_rows(
    run_id: str,
    benchmark: str,
    system: str,
    frame: pd.DataFrame,
    judgments: pd.DataFrame | None,
    samples: int,
) -> list[dict[str, Any]]:
    """`eval_metrics` rows of the protocol figures: the whole benchmark (qtype '*') and each qtype."""
    out = []
    groups = [("*", frame)] + [(str(q), g) for q, g in frame.groupby(frame["qtype"].fillna("(none)"))]
    for qtype, group in groups:
        n = int(((group["status"] == "answered") & (group["sample"] == 0)).sum())
        summary = summarize_protocol(group, judgments, samples)
        for metric in PROTOCOL_METRICS:
            value = summary[metric]
            out.append(
                {
                    "run_id": run_id,
                    "benchmark": benchmark,
                    "system": system,
                    "qtype": qtype,
                    "metric": metric,
                    "value": None if value is None else float(value),
                    "n": n,
                }
            )
    return out
