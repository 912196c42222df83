"""The markdown a Prefect user opens after a build or an evaluation, and its one summary line, made
from the reports alone (publishing them on a real server is tested in
tests/flows/test_prefect_artifacts.py)."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pandas as pd
import pytest
from prefect.client.schemas.actions import ArtifactCreate

from flows import prefect_artifacts as artifacts
from flows.build.corpus import BuildReport
from flows.build.runner import DocumentReport, StageOutcome
from flows.evaluation.evaluate import EvalReport
from tasks.evaluate.metrics import METRICS


def _build_report() -> BuildReport:
    good = DocumentReport(
        "the_lighthouse_key",
        "The Lighthouse Key",
        [StageOutcome("segment_sections", "built"), StageOutcome("split_chunks", "skipped")],
        seconds=3.25,
    )
    lossy = DocumentReport(
        "storm|night",  # a pipe in an id must not break the table
        "Storm",
        [
            StageOutcome("extract_graph", "partial", lost_items=3, warnings=["3 item(s) lost: no answer"]),
            StageOutcome("canonicalize_entities", "failed", error="ContractError: duplicate\nkey"),
            StageOutcome("assemble_episodes", "blocked", error="not run: canonicalize_entities failed"),
        ],
        seconds=1.5,
    )
    return BuildReport(
        documents=[good, lossy],
        ingest_failures=[{"item_id": "scan.pdf", "error": "a scanned PDF has no text layer"}],
        notices=["2 file(s) skipped"],
        removed=["old_doc"],
        seconds=4.75,
    )


def _table_rows(markdown: str, first_cell: str) -> list[list[str]]:
    """The cells of every table row whose first cell is `first_cell` (escaped pipes kept whole)."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("| "):
            cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if cells[0] == first_cell:
                rows.append(cells)
    return rows


def test_the_build_artifact_counts_each_documents_stage_runs_and_lists_what_was_lost(tmp_path):
    report = _build_report()
    markdown = artifacts.build_markdown(report, tmp_path / "corpus")
    assert markdown.startswith("# Build of `corpus`")
    statuses = ("built", "skipped", "partial", "failed", "blocked")
    for document in report.documents:
        (row,) = [row for row in _table_rows(markdown, document.doc_id) if len(row) == 8]  # the totals table
        assert row[1:6] == [str(sum(o.status == s for o in document.outcomes)) for s in statuses]
        assert row[6] == str(sum(o.lost_items for o in document.outcomes))
    lost = {tuple(row[1:3]) for row in _table_rows(markdown, "storm|night") if len(row) == 4}
    assert lost == {
        ("extract_graph", "partial"),
        ("canonicalize_entities", "failed"),
        ("assemble_episodes", "blocked"),
    }
    assert "ContractError: duplicate key" in markdown  # one line per cell
    assert "scan.pdf" in markdown and "no text layer" in markdown
    assert "`old_doc`" in markdown and "2 file(s) skipped" in markdown


def test_the_build_summary_is_one_line_with_the_reports_totals():
    report = _build_report()
    line = artifacts.build_summary(report)
    totals = report.summary()
    assert "\n" not in line and "INCOMPLETE" in line  # a build that lost work says so
    for name in ("built", "skipped", "failed", "blocked"):
        assert f"{totals[name]} {name}" in line or f"{totals[name]} stage runs {name}" in line
    assert f"{totals['partial']} partial ({totals['lost_items']} item(s) lost)" in line
    complete = BuildReport(documents=[report.documents[0]])
    assert "complete" in artifacts.build_summary(complete) and complete.ok


def _eval_report() -> EvalReport:
    rows = pd.DataFrame(
        {
            "qid": ["q1", "q2", "q3", "q3"],
            "qtype": ["Temporal", "Temporal", None, None],
            "status": ["answered", "answered", "answered", "answered"],
        }
    )
    metrics = {metric: 0.5 for metric in METRICS}
    return EvalReport(
        "run_0123456789abcdef",
        "the_lighthouse_key",
        "nkw",
        rows,
        metrics,
        {"Temporal": {**metrics, "evidence_recall": 0.75}, "(none)": metrics},
        protocol={
            "overall": 0.4,
            "overall_source": "option_match",
            "pass_at_k": None,
            "k": 1,
            "judged_answers": 0,
        },
        notes=["offline: answers are extractive"],
    )


def test_the_eval_artifact_is_the_scores_table_under_the_runs_label():
    report = _eval_report()
    when = datetime(2025, 1, 2, 3, 4, tzinfo=timezone.utc)
    label = artifacts.run_label(report, None, "answer.hierarchy=false", when)
    assert label.startswith("nkw on the_lighthouse_key · offline · answer.hierarchy=false · 2025-01-02 03:04")
    assert label.endswith(report.run_id)
    markdown = artifacts.eval_markdown(report, label)
    assert markdown.splitlines()[0] == f"# Evaluation: {label}"
    (header,) = _table_rows(markdown, "question type")
    assert header == ["question type", "n", *METRICS]
    (everything,) = _table_rows(markdown, "ALL")
    assert everything[1] == str(report.rows["qid"].nunique())  # questions, not samples
    (temporal,) = _table_rows(markdown, "Temporal")
    assert temporal[1] == "2" and temporal[2] == "0.75"
    assert "Overall 0.4 (option_match)" in markdown and "offline: answers are extractive" in markdown
    summary = artifacts.eval_summary(report, label)
    assert "\n" not in summary and label in summary and "evidence_recall 0.5" in summary


def test_a_run_with_default_settings_says_so():
    label = artifacts.run_label(_eval_report(), "Qwen/Qwen3-8B", "", datetime.now(timezone.utc))
    assert " · Qwen/Qwen3-8B · default settings · " in label


@pytest.mark.parametrize("name", ["The Lighthouse Key", "ws", "数据 集", "---", "a" * 200])
def test_artifact_keys_are_what_prefect_accepts_and_keep_workspaces_apart(tmp_path, name):
    one = artifacts.artifact_key("build", name, tmp_path / "one")
    other = artifacts.artifact_key("build", name, tmp_path / "other")
    ArtifactCreate(key=one)  # Prefect's own validation: lowercase letters, digits and dashes
    assert one != other and one.startswith("nkw-build-") and len(one) <= artifacts.KEY_LENGTH
    assert one == artifacts.artifact_key("build", name, tmp_path / "one")  # one history per workspace


def test_without_a_flow_run_nothing_is_published_and_no_server_is_asked(monkeypatch):
    from flows import prefect_server

    monkeypatch.setattr(prefect_server, "choose_server", lambda meter=None: pytest.fail("asked a server"))
    assert artifacts.publish("nkw-build-x", "# x", "x", "x", True, "build:/nowhere") is None
