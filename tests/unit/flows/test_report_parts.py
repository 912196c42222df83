"""The report's pure parts: rounded figures, bars that never average runs, the ablation figure of
the metrics that moved, run labels, and the eval_runs row of a run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

from flows.evaluation.evaluate import answering_identity
from flows.evaluation.run_records import run_row, settings_summary
from flows.inspection.report import number
from flows.inspection.report_runs import answer_models, in_run_order, label_runs, run_order
from flows.inspection.report_charts import ablation_chart, bars
from schemas.config import Settings


def test_figures_are_rounded_for_reading():
    assert [number(v) for v in (0.30434782, 0.2, 12.3456, 1234.4, 7, None, float("nan"))] == [
        "0.304",
        "0.200",
        "12.3",
        "1,234",
        "7",
        "—",
        "—",
    ]
    assert number(0.0125, delta=True) == "+0.013" and number(-0.2, delta=True) == "-0.200"


def test_two_values_for_one_bar_are_refused_not_averaged():
    frame = pd.DataFrame({"qtype": ["who", "who"], "label": ["nkw", "nkw"], "score": [0.304, 0.2]})
    with pytest.raises(ValueError, match="labels must name each run"):
        bars(frame, "qtype", "label", "score", "per type", "score")
    frame["label"] = ["nkw · 1a2b3c", "nkw · 4d5e6f"]
    assert bars(frame, "qtype", "label", "score", "per type", "score").startswith("data:image/png;base64,")


def _ablation(recall_deltas: list[float]) -> pd.DataFrame:
    settings = ["full", "no_hierarchy", "saber_raw"]
    return pd.DataFrame(
        {
            "label": ["full", "no_hierarchy", "saber_raw (build)"],
            "setting": settings,
            "benchmark": ["b"] * 3,
            "overall": [0.5] * 3,
            "evidence_recall": [0.8 + d for d in recall_deltas],
            "overall_delta": [0.0] * 3,
            "evidence_recall_delta": recall_deltas,
            "pass_at_k_delta": [None] * 3,
        }
    )


def test_the_ablation_figure_shows_the_metrics_that_moved():
    image, shown = ablation_chart(_ablation([0.0, -0.1, 0.0]))
    assert image and shown == "change against the full system: evidence recall"
    image, shown = ablation_chart(_ablation([0.0, 0.0, 0.0]))  # nothing moved: not an empty chart
    assert image and shown.startswith("no setting changed a metric")


def test_labels_say_what_each_run_is_and_still_tell_twins_apart():
    runs = pd.DataFrame(
        {
            "run_id": ["run_aaaaaa11", "run_bbbbbb22", "run_cccccc33", "run_dddddd44"],
            "benchmark": ["b", "b", "b", "b"],
            "system": ["nkw", "hybrid", "nkw", "nkw"],
            "settings": ["", "", "break_cycles.mode=raw", ""],
            "setting": ["", "", "saber_raw", ""],
            "variant": ["", "", "saber_raw", ""],
            "question_limit": [3, None, 6, 3],
            "samples": [1, 2, 1, 1],
            "is_offline": [True, False, True, True],
            "started": [
                "2025-03-01T09:15:02+00:00",
                "2025-03-01T10:00:00+00:00",
                None,
                "2025-03-01T09:15:40+00:00",
            ],
        }
    )
    labels = label_runs(runs, {"run_bbbbbb22": "qwen2.5-7b"})
    assert labels["run_bbbbbb22"] == "hybrid · b · defaults, 2 samples · qwen2.5-7b · 2025-03-01 10:00"
    assert labels["run_cccccc33"] == "nkw · b · saber_raw, limit 6 · offline · start unknown"
    # Two runs alike to the minute: their seconds tell them apart.
    assert labels["run_aaaaaa11"] == "nkw · b · defaults, limit 3 · offline · 2025-03-01 09:15:02"
    assert labels["run_dddddd44"] == "nkw · b · defaults, limit 3 · offline · 2025-03-01 09:15:40"
    assert len(set(labels.values())) == 4


def test_the_answering_model_is_read_from_each_runs_llm_call_files():
    calls = pa.table(
        {
            "model": ["qwen-7b", "qwen-7b", "judge-x", None],
            "filename": [
                "doc_a__answer-run_0a1b.parquet",
                "doc_b__answer-run_0a1b.parquet",
                "doc_a__answer-run_ffee.parquet",
                "doc_a__answer-run_9999.parquet",
            ],
        }
    )
    assert answer_models(calls) == {"run_0a1b": "qwen-7b", "run_ffee": "judge-x"}


def test_every_table_lists_runs_in_the_order_they_started():
    runs = pd.DataFrame(
        {
            "run_id": ["run_b", "run_a", "run_c"],
            "started": ["2025-03-02T08:00:00+00:00", "2025-03-03T08:00:00+00:00", None],
        }
    )
    order = run_order(runs)
    assert order == {"run_b": 0, "run_a": 1, "run_c": 2}
    qtypes = pd.DataFrame({"run_id": ["run_a", "run_a", "run_c", "run_b"], "qtype": ["x", "y", "x", "x"]})
    ordered = in_run_order(qtypes, order)
    assert list(zip(ordered["run_id"], ordered["qtype"])) == [
        ("run_b", "x"),
        ("run_a", "x"),
        ("run_a", "y"),
        ("run_c", "x"),
    ]


def test_a_run_row_is_complete_only_with_every_answer():
    defaults = answering_identity(Settings())
    changed = Settings.model_validate({"answer": {"follow_up_rounds": 0}, "break_cycles": {"mode": "raw"}})
    summary = settings_summary(answering_identity(changed), defaults)
    assert summary == "answer.follow_up_rounds=0, break_cycles.mode=raw"
    assert settings_summary(defaults, defaults) == ""
    common = dict(
        run_id="run_1",
        benchmark="b",
        questions_path=Path("data") / "b.questions.jsonl",
        questions_sha256="ab" * 32,
        system="nkw",
        settings=summary,
        setting="",
        variant="",
        ablation_id=None,
        limit=None,
        samples=2,
        expected=310 * 2,
        is_offline=True,
        judge_model=None,
    )
    lost = run_row(**common, answered=44)
    assert lost["status"] == "incomplete" and lost["questions_file"] == "b.questions.jsonl"
    assert run_row(**common, answered=620)["status"] == "complete"
