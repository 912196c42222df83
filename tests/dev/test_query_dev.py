"""NKW against the hybrid baseline on the three dev sets in one offline run, at an equal
evidence budget (issue acceptance: higher recall on STAGE, at least equal on FairytaleQA)."""

from __future__ import annotations

from flows.evaluation.compare_systems import compare, format_comparison
from schemas.config import load_settings
from tasks.tables.io import Workspace
from tests.dev.conftest import BENCHMARKS


def test_nkw_beats_the_hybrid_baseline_at_an_equal_budget(dev_workspace, shared_data):
    workspace, _ = dev_workspace
    comparisons = compare(
        Workspace.at(workspace), [shared_data / b / "questions.jsonl" for b in BENCHMARKS], load_settings()
    )
    print(format_comparison(comparisons))
    by_name = {c.benchmark: c for c in comparisons}
    for comparison in comparisons:
        assert comparison.over_budget() == 0, comparison.benchmark  # never more source text than the baseline
    stage, fairy, quality = by_name["stage"], by_name["fairytaleqa"], by_name["quality"]
    recall = {
        name: {s: c.reports[s].metrics["evidence_recall"] for s in ("nkw", "hybrid")}
        for name, c in by_name.items()
    }
    assert recall["stage"]["nkw"] > recall["stage"]["hybrid"]
    assert recall["fairytaleqa"]["nkw"] >= recall["fairytaleqa"]["hybrid"]
    for system in ("nkw", "hybrid"):
        assert quality.reports[system].metrics["mcq_accuracy"] is not None
        assert len(stage.reports[system].by_qtype) == 6 and len(fairy.reports[system].by_qtype) >= 6
    assert all(report.rows["is_offline"].all() for c in comparisons for report in c.reports.values())
