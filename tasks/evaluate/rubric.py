"""The rubric judge for long answers: a whole-story question (its plot, a character's part, a theme)
has several written references and no one right wording, so a correct/incorrect label says little.
Each vote scores the answer against every reference on the criteria of `RubricReply` (coverage of
the references' main points, faithfulness, coherence and story order), each from 1 to 5 with a
short reason. Votes are sampled as the label judge's are (vote n carries seed n); an answer's score
on a criterion is the median of its votes, as the label judge takes the majority.

Pure functions over an injected LLM client and stored `judgments` rows.
"""

from __future__ import annotations

from statistics import mean, median
from typing import Any, Sequence

import pandas as pd

from schemas.responses.judge import RUBRIC_SCALE, RubricReply
from tasks.evaluate.judge import JudgeItem, ask_votes
from tasks.llm.client.protocol import LLMRequest, LLMResult
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.tables.io import as_list

RUBRIC_PROMPT = "judge_rubric/v1"
RUBRIC_STAGE = "judge_rubric"
RUBRIC_MAX_TOKENS = 384  # three scores with a sentence each
RUBRIC_CRITERIA = tuple(RubricReply.model_fields)  # coverage, faithfulness, coherence
LOW, HIGH = RUBRIC_SCALE
RUBRIC_METRICS = ("rubric_judged_answers", *(f"rubric_{c}" for c in RUBRIC_CRITERIA), "rubric_score")


def references_text(references: Sequence[str]) -> str:
    """The references numbered, one block each, for the prompt's user part."""
    return "\n\n".join(f"[{n}] {' '.join(text.split())}" for n, text in enumerate(references, start=1))


def rubric_requests(item: JudgeItem, votes: int, temperature: float) -> list[LLMRequest]:
    """`votes` requests for one long answer: same prompt, seed = vote number."""
    prompt = load_prompt(RUBRIC_PROMPT, item.language)
    references = item.references or (item.reference,)
    messages = render_messages(
        prompt,
        {
            "question": item.question,
            "answer": item.answer or "(no answer)",
            "references": references_text(references),
        },
    )
    return [
        LLMRequest(
            stage=RUBRIC_STAGE,
            item_id=f"{item.qid}:s{item.sample}:v{vote}",
            doc_id=item.doc_id,
            prompt_id=prompt.prompt_id,
            prompt_hash=prompt.sha256,
            messages=messages,
            max_tokens=RUBRIC_MAX_TOKENS,
            temperature=temperature,
            seed=vote,
        )
        for vote in range(votes)
    ]


def rubric_vote_row(
    run_id: str, item: JudgeItem, vote: int, result: LLMResult[RubricReply], judge_model: str
) -> dict[str, Any]:
    """One `judgments` row of kind 'rubric': the scores with their reasons, no label; a failed call
    has no scores (it casts no vote) and says why in `reason`."""
    reply = result.value
    scores = None
    if reply is not None:
        scores = [
            {
                "criterion": c,
                "score": int(getattr(reply, c).score),
                "reason": getattr(reply, c).reason.strip(),
            }
            for c in RUBRIC_CRITERIA
        ]
    return {
        "run_id": run_id,
        "benchmark": item.benchmark,
        "qid": item.qid,
        "sample": item.sample,
        "vote": vote,
        "kind": "rubric",
        "label": None,
        "rubric": scores,
        "reason": None
        if reply is not None
        else f"judge call failed: {result.status}: {result.error or ''}"[:600],
        "judge_model": judge_model,
        "call_id": result.call_key,
        "status": "failed" if reply is None else ("cached" if result.status == "cached" else "ok"),
        "prompt_hash": result.request.prompt_hash,
    }


def rubric_items(
    client: Any, run_id: str, items: Sequence[JudgeItem], votes: int, temperature: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Score every long answer `votes` times. Returns (`judgments` rows, `llm_calls` rows)."""
    return ask_votes(client, run_id, items, votes, temperature, rubric_requests, RubricReply, rubric_vote_row)


def rubric_scores(judgments: pd.DataFrame | None) -> pd.DataFrame:
    """One row per rubric-judged (qid, sample): the votes cast, each criterion's median over them,
    and `score`, the mean of the criteria's medians mapped to 0-1."""
    columns = ["qid", "sample", "votes", *RUBRIC_CRITERIA, "score"]
    if judgments is None or judgments.empty or "kind" not in judgments:
        return pd.DataFrame(columns=columns)
    cast = judgments[(judgments["kind"] == "rubric") & judgments["rubric"].notna()]
    rows = []
    for (qid, sample), group in cast.groupby(["qid", "sample"]):
        by_criterion: dict[str, list[int]] = {c: [] for c in RUBRIC_CRITERIA}
        for scores in group["rubric"]:
            for entry in as_list(scores):
                by_criterion.setdefault(entry["criterion"], []).append(int(entry["score"]))
        medians = {
            c: float(median(v)) if v else None for c, v in by_criterion.items() if c in RUBRIC_CRITERIA
        }
        known = [(m - LOW) / (HIGH - LOW) for m in medians.values() if m is not None]
        rows.append(
            {
                "qid": str(qid),
                "sample": int(sample),
                "votes": len(group),
                **medians,
                "score": mean(known) if known else None,
            }
        )
    return pd.DataFrame(rows, columns=columns)


def summarize_rubric(frame: pd.DataFrame, judgments: pd.DataFrame | None) -> dict[str, Any]:
    """Over the answered first samples of `frame` that the rubric judged: how many, and the mean of
    each criterion (on its 1-5 scale) and of the 0-1 score. Empty without rubric votes."""
    scores = rubric_scores(judgments)
    first = frame[(frame["status"] == "answered") & (frame["sample"] == 0)][["qid", "sample"]]
    judged = first.astype({"qid": str, "sample": int}).merge(scores, on=["qid", "sample"])
    if judged.empty:
        return {}

    def average(column: str) -> float | None:
        values = judged[column].dropna()
        return round(float(values.mean()), 4) if len(values) else None

    return {
        "judged_answers": len(judged),
        **{c: average(c) for c in RUBRIC_CRITERIA},
        "score": average("score"),
        "scale": f"{LOW}-{HIGH}",
    }


def rubric_report(frame: pd.DataFrame, judgments: pd.DataFrame | None) -> dict[str, Any]:
    """`summarize_rubric` of the whole run with `by_qtype`, each question type's; empty without
    rubric votes."""
    summary = summarize_rubric(frame, judgments)
    if summary:
        groups = frame.groupby(frame["qtype"].fillna("(none)"))
        summary["by_qtype"] = {str(q): part for q, g in groups if (part := summarize_rubric(g, judgments))}
    return summary


def rubric_metric_rows(
    run_id: str, benchmark: str, system: str, frame: pd.DataFrame, judgments: pd.DataFrame | None
) -> list[dict[str, Any]]:
    """`eval_metrics` rows of the rubric figures for the whole benchmark (qtype '*') and each qtype
    with a judged answer; none when the run has no rubric votes."""
    out = []
    groups = [("*", frame)] + [(str(q), g) for q, g in frame.groupby(frame["qtype"].fillna("(none)"))]
    for qtype, group in groups:
        summary = summarize_rubric(group, judgments)
        if not summary:
            continue
        values = {
            "rubric_judged_answers": summary["judged_answers"],
            **{f"rubric_{c}": summary[c] for c in RUBRIC_CRITERIA},
            "rubric_score": summary["score"],
        }
        out.extend(
            {
                "run_id": run_id,
                "benchmark": benchmark,
                "system": system,
                "qtype": qtype,
                "metric": metric,
                "value": None if values[metric] is None else float(values[metric]),
                "n": summary["judged_answers"],
            }
            for metric in RUBRIC_METRICS
        )
    return out


def rubric_line(summary: dict[str, Any]) -> str:
    """The report's line of rubric figures ('' without rubric votes)."""
    if not summary:
        return ""
    shown = "   ".join(
        f"{c} {'—' if summary[c] is None else format(summary[c], '.3g')}/{HIGH}" for c in RUBRIC_CRITERIA
    )
    score = "—" if summary["score"] is None else format(summary["score"], ".3g")
    return f"Rubric (whole-story answers, {summary['judged_answers']} judged): {shown}   score {score} (0-1)"
