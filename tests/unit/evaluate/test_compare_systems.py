"""The comparison table reads three systems: both baselines beside NKW, each checked against the
450-word baseline's source-token budget."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from flows.evaluation.compare_systems import SYSTEMS, Comparison, format_comparison


def _report(tokens: list[int], recall: float) -> SimpleNamespace:
    rows = pd.DataFrame(
        {"qid": ["a", "b"], "sample": [0, 0], "status": ["answered"] * 2, "evidence_tokens": tokens}
    )
    metrics = {
        "evidence_recall": recall,
        "mcq_accuracy": None,
        "rouge_l_f1": 0.2,
        "latency_ms_p50": 1.0,
        "latency_ms_p95": 2.0,
    }
    by_qtype = {"Causal": {"evidence_recall": recall, "rouge_l_f1": 0.1}}
    return SimpleNamespace(rows=rows, metrics=metrics, skipped_documents=[], by_qtype=by_qtype)


def test_three_systems_and_the_budget_check_of_each():
    assert SYSTEMS == ("hybrid", "hybrid_fine", "nkw")
    reports = {"hybrid": _report([10, 10], 0.4), "hybrid_fine": _report([9, 11], 0.6)}
    comparison = Comparison("stage", {**reports, "nkw": _report([10, 9], 0.7)})
    assert comparison.over_budget() == 0 and comparison.over_budget("hybrid_fine") == 1
    assert [r["system"] for r in comparison.summary_rows()] == list(SYSTEMS)
    text = format_comparison([comparison])
    assert "used more source tokens than the baseline: 0 / 1" in text
    assert "evidence_recall 0.4, 0.6 → 0.7" in text
