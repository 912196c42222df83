"""NKW against the two hybrid baselines (450-word chunks; ~40-word windows) on the same questions,
at an equal evidence budget: evidence recall beside the source tokens each system put in its final
evidence, multiple choice accuracy, ROUGE-L and latency, per benchmark and per question type."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flows.answer_questions import QueryEngine
from flows.evaluation.evaluate import EvalReport, evaluate
from schemas.config import Settings
from tasks.tables.io import Workspace

SYSTEMS = ("hybrid", "hybrid_fine", "nkw")


@dataclass
class Comparison:
    benchmark: str
    reports: dict[str, EvalReport]

    def budget(self, system: str) -> float | None:
        rows = self.reports[system].rows
        tokens = rows.loc[rows["status"] == "answered", "evidence_tokens"].dropna()
        return round(float(tokens.mean()), 1) if len(tokens) else None

    def over_budget(self, system: str = "nkw") -> int:
        """Questions where `system`'s final evidence has more source tokens than the 450-word
        baseline's top-k chunks."""
        keys = ["qid", "sample"]
        ours = self.reports[system].rows[keys + ["evidence_tokens"]]
        theirs = self.reports["hybrid"].rows[keys + ["evidence_tokens"]]
        merged = ours.merge(theirs, on=keys, suffixes=("_ours", "_hybrid"))
        return int((merged["evidence_tokens_ours"] > merged["evidence_tokens_hybrid"]).sum())

    def summary_rows(self) -> list[dict[str, Any]]:
        return [
            {
                "benchmark": self.benchmark,
                "system": system,
                **report.metrics,
                "source_tokens_mean": self.budget(system),
                "n": int((report.rows["status"] == "answered").sum()),
            }
            for system, report in self.reports.items()
        ]


def compare(workspace: Workspace, questions: list[Path], settings: Settings) -> list[Comparison]:
    """Every system on every questions file, in one run (one loaded engine, offline unless an LLM is set)."""
    engine = QueryEngine(workspace, settings)
    comparisons = []
    for path in questions:
        reports = {
            system: evaluate(workspace, path, settings, system=system, engine=engine) for system in SYSTEMS
        }
        comparisons.append(Comparison(next(iter(reports.values())).benchmark, reports))
    return comparisons


def _fmt(value: Any) -> str:
    return "—" if value is None else (f"{value:.4g}" if isinstance(value, float) else str(value))


def format_comparison(comparisons: list[Comparison]) -> str:
    columns = (
        "evidence_recall",
        "source_tokens_mean",
        "mcq_accuracy",
        "rouge_l_f1",
        "latency_ms_p50",
        "latency_ms_p95",
    )
    header = f"{'benchmark':<12} {'system':<11} {'n':>4} " + " ".join(f"{c:>18}" for c in columns)
    lines = [header, "-" * len(header)]
    for comparison in comparisons:
        for row in comparison.summary_rows():
            lines.append(
                f"{row['benchmark']:<12} {row['system']:<11} {row['n']:>4} "
                + " ".join(f"{_fmt(row[c]):>18}" for c in columns)
            )
        lines.append(
            f"{'':<12} questions where NKW / hybrid_fine used more source tokens than the baseline: "
            f"{comparison.over_budget()} / {comparison.over_budget('hybrid_fine')}"
        )
        missing = sorted({d for report in comparison.reports.values() for d in report.skipped_documents})
        if missing:
            lines.append(f"{'':<12} not in the workspace (questions skipped): {', '.join(missing)}")
    for comparison in comparisons:
        qtypes = sorted(set().union(*(r.by_qtype for r in comparison.reports.values())))
        if not qtypes or qtypes == ["(none)"]:
            continue
        lines += [
            "",
            f"{comparison.benchmark}: evidence recall / ROUGE-L by question type (hybrid, hybrid_fine → nkw)",
        ]
        for qtype in qtypes:
            cells = []
            for metric in ("evidence_recall", "rouge_l_f1"):
                values = [comparison.reports[s].by_qtype.get(qtype, {}).get(metric) for s in SYSTEMS]
                cells.append(f"{metric} {_fmt(values[0])}, {_fmt(values[1])} → {_fmt(values[2])}")
            lines.append(f"  {qtype[:34]:<34} " + "   ".join(cells))
    lines.append(
        "offline: answers are extractive, no LLM; budgets are mean source tokens in the final evidence"
    )
    return "\n".join(lines)
