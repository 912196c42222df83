"""The report's rubric section and the judge's vote count, over a run's `judgments` and `eval_metrics`
as evaluation writes them (the same metric functions): the rubric section shows the stored rubric
and ROUGE figures of a run the rubric judge scored, a run without rubric votes has no row (and alone,
no section), and judge agreement counts the correctness judge's label votes only."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from flows.evaluation.run_records import run_row
from flows.inspection.report import load_report_data, render_html
from tasks.evaluate.metrics import metric_rows
from tasks.evaluate.protocol import correctness, protocol_metric_rows
from tasks.evaluate.rubric import RUBRIC_CRITERIA, rubric_metric_rows
from tasks.tables.io import Workspace, read_frame, write_table

BENCHMARK, SYSTEM = "b", "nkw"
RUBRIC_RUN, LABEL_RUN = "run_0a1b2c3d", "run_4e5f6a7b"
VOTES = 3
HEADING = "Long answers: rubric judge per run"


def _answers() -> pd.DataFrame:
    """Two short free-form answers (labelled) and one whole-story answer (scored with the rubric)."""
    return pd.DataFrame(
        {
            "qid": ["q-who", "q-where", "q-plot"], "sample": [0, 0, 0], "status": ["answered"] * 3,
            "qtype": ["character", "setting", "plot"], "gold_option": [None] * 3, "is_offline": [False] * 3,
            "is_correct_option": [None] * 3, "evidence_recall": [1.0, 0.5, 0.25],
            "latency_ms": [10.0, 20.0, 30.0], "rouge_1_f1": [0.5, 0.4, 0.3],
            "rouge_2_f1": [0.2, 0.1, 0.05], "rouge_l_f1": [0.45, 0.35, 0.25],
        }
    )  # fmt: skip


def _vote(run_id: str, qid: str, vote: int, label: bool | None, scores: dict[str, int] | None) -> dict:
    rubric = None
    if scores is not None:
        rubric = [{"criterion": c, "score": s, "reason": "r"} for c, s in scores.items()]
    return {
        "run_id": run_id, "benchmark": BENCHMARK, "qid": qid, "sample": 0, "vote": vote,
        "kind": "label" if scores is None else "rubric", "label": label, "rubric": rubric, "reason": None,
        "judge_model": "judge-x", "call_id": None, "status": "ok", "prompt_hash": None,
    }  # fmt: skip


def _judgments(run_id: str, with_rubric: bool) -> pd.DataFrame:
    votes = [_vote(run_id, qid, v, v != 2, None) for qid in ("q-who", "q-where") for v in range(VOTES)]
    if with_rubric:
        votes += [
            _vote(run_id, "q-plot", v, None, {"coverage": 2 + v, "faithfulness": 5 - v, "coherence": 4})
            for v in range(VOTES)
        ]
    return pd.DataFrame(votes)


def _store_run(workspace: Workspace, run_id: str, with_rubric: bool) -> None:
    """The run's tables as `flows.evaluation.evaluate` writes them."""
    answers, judgments = _answers(), _judgments(run_id, with_rubric)
    metrics = metric_rows(run_id, BENCHMARK, SYSTEM, answers)
    metrics += protocol_metric_rows(run_id, BENCHMARK, SYSTEM, correctness(answers, judgments), judgments, 1)
    metrics += rubric_metric_rows(run_id, BENCHMARK, SYSTEM, answers, judgments)
    write_table(workspace, "judgments", judgments, run_id)
    write_table(workspace, "eval_metrics", metrics, run_id)
    row = run_row(
        run_id=run_id, benchmark=BENCHMARK, questions_path=Path("b.questions.jsonl"),
        questions_sha256="ab" * 32, system=SYSTEM, settings="", setting="", variant="", ablation_id=None,
        limit=None, samples=1, expected=3, is_offline=False, judge_model="judge-x", answered=3,
    )  # fmt: skip
    write_table(workspace, "eval_runs", [row], run_id)


def test_the_rubric_section_shows_the_stored_figures_and_judge_votes_are_label_votes(tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    _store_run(workspace, RUBRIC_RUN, with_rubric=True)
    _store_run(workspace, LABEL_RUN, with_rubric=False)
    data = load_report_data(workspace)

    rubric = data.frames["rubric"]
    assert rubric["run_id"].tolist() == [RUBRIC_RUN]  # the run without rubric votes has no row
    shown = rubric.iloc[0]
    stored = read_frame(workspace, "eval_metrics", RUBRIC_RUN)
    whole = stored[stored["qtype"] == "*"].set_index("metric")["value"]
    assert whole["rubric_judged_answers"] == 1 and shown["judged_answers"] == 1
    assert whole["rubric_coverage"] == 3.0  # the median of the votes 2, 3, 4
    for criterion in RUBRIC_CRITERIA:
        assert shown[criterion] == whole[f"rubric_{criterion}"], criterion
    assert shown["score"] == whole["rubric_score"] and 0 < shown["score"] < 1
    for metric in ("rouge_1_f1", "rouge_2_f1", "rouge_l_f1"):
        assert shown[metric] == whole[metric] and pd.notna(shown[metric]), metric
    assert shown["judge_model"] == "judge-x" and shown["label"].startswith(f"{SYSTEM} · {BENCHMARK}")

    # Both runs have 2 labelled answers x 3 votes; the rubric run's 3 rubric votes are not counted.
    judge = data.frames["judge"].set_index("run_id")
    assert len(read_frame(workspace, "judgments", RUBRIC_RUN)) == 9
    assert judge.loc[RUBRIC_RUN, "votes"] == 6 and judge.loc[LABEL_RUN, "votes"] == 6
    assert (judge["judged_answers"] == 2).all()

    page = render_html(data)
    section = page[page.index('<table class="rubric">') :].split("</table>")[0]
    headers = ["judged answers", *(f"{c} (1-5)" for c in RUBRIC_CRITERIA), "score", "ROUGE-L"]
    assert HEADING in page and all(f"<th>{h}</th>" in section for h in headers)
    assert f"<td>{shown['coverage']:.3f}</td>" in section
    # A report of the run without rubric votes leaves the section out, as any empty section.
    assert HEADING not in render_html(load_report_data(workspace, [LABEL_RUN]))
