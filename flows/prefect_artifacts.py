"""What a Prefect user opens after a build or an evaluation: a markdown artifact on the flow run
(what was built, skipped, partial and lost; the scores table with the run's label) and one summary
line in the run's logs.

The deployment flows (`build_corpus`, `evaluate_benchmark`) publish on their own run. A build or
evaluation started by `nkw` runs its documents as a flow and finishes outside it (the scores come
after the answers), so its artifact is attached afterwards to that flow's run, which the flow
records here under its workspace or its evaluation run id.

The markdown comes from pure functions of the reports; only `publish` talks to Prefect, and a
server that does not take the artifact costs the command a warning, never its result.
"""

from __future__ import annotations

import logging
import re
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from flows.prefect_server import reporting_to_server
from schemas.ids import stable_hash
from tasks.evaluate.metrics import METRICS

if TYPE_CHECKING:  # the reports are only read here; importing their modules would pull in the flows
    from flows.build.corpus import BuildReport
    from flows.evaluation.evaluate import EvalReport

_flow_runs: dict[str, Any] = {}  # what a flow worked on -> the id of its run
_lock = threading.Lock()
KEY_LENGTH = 80  # artifact keys are shown whole in the UI's list


def build_subject(workspace: Path | str) -> str:
    """What a build flow works on, as `record_flow_run` and `publish` name it."""
    return f"build:{Path(workspace).resolve()}"


def eval_subject(run_id: str) -> str:
    """What an evaluation flow works on, as `record_flow_run` and `publish` name it."""
    return f"eval:{run_id}"


def record_flow_run(subject: str) -> None:
    """Inside a flow: remember its run as the one that worked on `subject`."""
    from prefect.context import FlowRunContext

    context = FlowRunContext.get()
    if context is not None and context.flow_run is not None:
        with _lock:
            _flow_runs[subject] = context.flow_run.id


def artifact_key(kind: str, name: str, place: Path | str) -> str:
    """A key Prefect accepts (lowercase letters, digits, dashes) that keeps one history per kind,
    name and workspace: two workspaces both called `ws` keep apart by the hash of their path."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "unnamed"
    suffix = stable_hash(str(Path(place).resolve()), length=6)
    return f"nkw-{kind}-{slug}"[: KEY_LENGTH - len(suffix) - 1].rstrip("-") + f"-{suffix}"


def _cell(value: Any, limit: int = 200) -> str:
    """A value as one markdown table cell: one line, pipes escaped, long text cut."""
    text = " ".join(str(value).split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text.replace("\\", "\\\\").replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(value) for value in row) + " |" for row in rows]
    return lines


def build_summary(report: BuildReport) -> str:
    """The build in one line, as its run's log shows it."""
    s = report.summary()
    state = "complete" if report.ok else "INCOMPLETE"
    return (
        f"nkw build {state}: {s['documents']} document(s), {s['built']} stage runs built, "
        f"{s['skipped']} skipped, {s['partial']} partial ({s['lost_items']} item(s) lost), "
        f"{s['failed']} failed, {s['blocked']} blocked; {s['ingest_failures']} input(s) not ingested; "
        f"{s['removed']} removed; {s['seconds']:.1f} s"
    )


def build_markdown(report: BuildReport, workspace: Path | str) -> str:
    """The build's artifact: totals, one row per document, then everything not built and why."""
    lines = [f"# Build of `{Path(workspace).name}`", "", f"**{build_summary(report)}**", ""]
    lines.append(f"Workspace `{workspace}`.")
    lines.append("")
    statuses = ["built", "skipped", "partial", "failed", "blocked"]
    rows = []
    for document in report.documents:
        counts = [sum(1 for o in document.outcomes if o.status == status) for status in statuses]
        lost = sum(o.lost_items for o in document.outcomes)
        rows.append([document.doc_id, *counts, lost, f"{document.seconds:.1f}"])
    if rows:
        lines += _table(["document", *statuses, "items lost", "seconds"], rows)
        lines.append("")
    lost_rows = [
        [document.doc_id, outcome.stage, outcome.status, outcome.error or "; ".join(outcome.warnings)]
        for document in report.documents
        for outcome in document.outcomes
        if outcome.status in ("partial", "failed", "blocked")
    ]
    if lost_rows:
        lines += ["## Lost or not built", ""]
        lines += _table(["document", "stage", "status", "why"], lost_rows)
        lines.append("")
    if report.ingest_failures:
        lines += ["## Inputs not ingested", ""]
        lines += _table(["input", "why"], [[f["item_id"], f["error"]] for f in report.ingest_failures])
        lines.append("")
    if report.removed:
        lines += ["## Removed (no longer in the inputs)", ""]
        lines += [f"- `{_cell(doc_id)}`" for doc_id in report.removed]
        lines.append("")
    if report.notices:
        lines += ["## Notices", ""]
        lines += [f"- {_cell(notice, 500)}" for notice in report.notices]
        lines.append("")
    return "\n".join(lines)


def run_label(report: EvalReport, model: str | None, settings: str, when: datetime) -> str:
    """What an evaluation run is, in words: system, benchmark, model (or offline), the settings that
    differ from the defaults, when it ended, and its id."""
    changed = settings if len(settings) <= 120 else settings[:119] + "…"
    return (
        f"{report.system} on {report.benchmark} · {model or 'offline'} · "
        f"{changed or 'default settings'} · {when.strftime('%Y-%m-%d %H:%M')} UTC · {report.run_id}"
    )


def _number(value: float | None) -> str:
    return "—" if value is None else format(value, ".4g")


def eval_summary(report: EvalReport, label: str) -> str:
    """The evaluation in one line, as its run's log shows it."""
    answered = report.rows[report.rows["status"] == "answered"] if not report.rows.empty else report.rows
    scores = ", ".join(
        f"{metric} {_number(report.metrics.get(metric))}"
        for metric in ("evidence_recall", "mcq_accuracy", "rouge_l_f1")
        if report.metrics.get(metric) is not None
    )
    overall = report.protocol.get("overall") if report.protocol else None
    missing = f"; documents missing: {len(report.skipped_documents)}" if report.skipped_documents else ""
    return (
        f"nkw eval {label}: {answered['qid'].nunique() if len(answered) else 0} question(s) answered; "
        f"{scores or 'no scores'}{'; Overall ' + _number(overall) if overall is not None else ''}{missing}"
    )


def eval_markdown(report: EvalReport, label: str) -> str:
    """The evaluation's artifact: the run's label, the scores per question type, and its notes."""
    lines = [f"# Evaluation: {_cell(label, 400)}", ""]
    answered = report.rows[report.rows["status"] == "answered"] if not report.rows.empty else report.rows
    rows = [["ALL", answered["qid"].nunique() if len(answered) else 0, *_scores(report.metrics)]]
    for qtype, metrics in sorted(report.by_qtype.items()):
        same = answered["qtype"].fillna("(none)") == qtype
        rows.append([qtype, answered[same]["qid"].nunique(), *_scores(metrics)])
    lines += _table(["question type", "n", *METRICS], rows)
    lines.append("")
    if report.protocol:
        p = report.protocol
        lines.append(
            f"Overall {_number(p.get('overall'))} ({p.get('overall_source')}) · "
            f"Pass@{p.get('k')} {_number(p.get('pass_at_k'))} · "
            f"judged answers {p.get('judged_answers')}"
        )
        lines.append("")
    if report.skipped_documents:
        lines.append(
            f"Not in the workspace (questions skipped): {_cell(', '.join(report.skipped_documents))}"
        )
        lines.append("")
    for heading, items in (("Warnings", report.warnings), ("Notes", report.notes)):
        if items:
            lines += [f"## {heading}", ""] + [f"- {_cell(item, 500)}" for item in items] + [""]
    return "\n".join(lines)


def _scores(metrics: dict[str, float | None]) -> list[str]:
    return [_number(metrics.get(metric)) for metric in METRICS]


def publish(key: str, markdown: str, description: str, summary: str, ok: bool, subject: str) -> str | None:
    """Create the markdown artifact and log the summary line on the current flow run, or on the
    run recorded for `subject` when called after the flow (with neither, no flow ran: nothing is
    published); None when done or not needed, else why not (one line)."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import ArtifactCreate, LogCreate
    from prefect.context import FlowRunContext

    with _lock:
        recorded = _flow_runs.pop(subject, None)
    context = FlowRunContext.get()
    flow_run_id = context.flow_run.id if context is not None and context.flow_run is not None else recorded
    if flow_run_id is None:
        return None
    try:
        with reporting_to_server(), get_client(sync_client=True) as client:
            client.create_artifact(
                ArtifactCreate(
                    key=key, type="markdown", description=description, data=markdown, flow_run_id=flow_run_id
                )
            )
            # Sent as it is, not through a logger: the run's log shows the line whatever level the
            # terminal's Prefect logging is set to.
            client.create_logs(
                [
                    LogCreate(
                        name="nkw",
                        level=logging.INFO if ok else logging.WARNING,
                        message=summary,
                        timestamp=datetime.now(timezone.utc),
                        flow_run_id=flow_run_id,
                    )
                ]
            )
    except Exception as exc:  # noqa: BLE001 - the build or evaluation itself is done and recorded
        return (
            f"the Prefect artifact {key} was not published: {type(exc).__name__}: "
            + " ".join(str(exc).split())[:200]
        )
    return None


def publish_build(report: BuildReport, workspace: Path | str) -> str | None:
    """Publish a build's artifact and summary line; None when done, else why not."""
    return publish(
        artifact_key("build", Path(workspace).name, workspace),
        build_markdown(report, workspace),
        f"nkw build of {Path(workspace).name}: built, skipped, partial and lost",
        build_summary(report),
        report.ok,
        build_subject(workspace),
    )


def publish_eval(report: EvalReport, workspace: Path | str, model: str | None, settings: str) -> str | None:
    """Publish an evaluation's artifact (its scores under the run's label) and summary line; None
    when done, else why not."""
    label = run_label(report, model, settings, datetime.now(timezone.utc))
    return publish(
        artifact_key("eval", f"{report.benchmark}-{report.system}", workspace),
        eval_markdown(report, label),
        f"nkw eval: {report.system} on {report.benchmark}",
        eval_summary(report, label),
        not report.skipped_documents,
        eval_subject(report.run_id),
    )
