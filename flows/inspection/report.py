"""`nkw report`: one self-contained HTML file (tables and PNG plots embedded as base64) from the
named report queries in schemas/sql/report_*.sql over qa_answers, qa_traces, judgments,
eval_metrics, ablation_results and llm_calls."""

from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pyarrow as pa  # noqa: E402

from tasks.tables.io import Workspace, read_table  # noqa: E402
from tasks.tables.warehouse import connect, load_sql  # noqa: E402

QUERIES = (
    "report_systems",
    "report_qtypes",
    "report_ablation",
    "report_tool_use",
    "report_latency_tokens",
    "report_judge_agreement",
)
STYLE = (
    """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}"""
    """td,th{border:1px solid #ddd;padding:3px 7px;text-align:right}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}img{max-width:100%}"""
    """.note{color:#666;font-size:.85em}"""
)


class ReportError(ValueError):
    """Nothing to report (no evaluation runs), or an unknown run id."""


@dataclass
class ReportData:
    frames: dict[str, pd.DataFrame]
    runs: list[str]
    notes: list[str] = field(default_factory=list)


def answer_llm_calls(workspace: Workspace) -> pa.Table:
    """Tokens of every LLM call made while answering, with the partition's file name (which names
    the run). Read here: the report's DuckDB connection opens no file itself."""
    parts = []
    for path in workspace.partitions("llm_calls"):
        if "__answer-" in path.stem:
            table = read_table(workspace, "llm_calls", path.stem, ["prompt_tokens", "completion_tokens"])
            parts.append(table.append_column("filename", pa.array([path.name] * len(table), pa.string())))
    if parts:
        return pa.concat_tables(parts)
    return pa.schema(
        [("prompt_tokens", pa.int64()), ("completion_tokens", pa.int64()), ("filename", pa.string())]
    ).empty_table()


def load_report_data(
    workspace: Workspace, runs: list[str] | None = None, ablation_id: str | None = None
) -> ReportData:
    """Run every named report query over the workspace views (restricted to `runs` when given)."""
    con = connect(workspace)
    try:
        known = [
            r[0] for r in con.execute("SELECT DISTINCT run_id FROM qa_answers ORDER BY run_id").fetchall()
        ]
        chosen = runs or known
        unknown = sorted(set(chosen) - set(known))
        if unknown:
            raise ReportError(
                f"no evaluation run {', '.join(unknown)} in this workspace (see `nkw sql` on qa_answers)"
            )
        if not chosen:
            raise ReportError(
                "this workspace has no evaluation runs yet: run `nkw eval` or `nkw ablate` first"
            )
        con.register("selected_runs", pd.DataFrame({"run_id": chosen}))
        con.register(
            "selected_ablation", pd.DataFrame({"id": [ablation_id] if ablation_id else []}, dtype=str)
        )
        con.register("llm_calls_files", answer_llm_calls(workspace))
        frames = {name: con.execute(load_sql(name)).df() for name in QUERIES}
    finally:
        con.close()
    return ReportData(frames, chosen)


def _png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _bars(frame: pd.DataFrame, index: str, columns: str, values: str, title: str, ylabel: str) -> str | None:
    data = frame.dropna(subset=[values])
    if data.empty:
        return None
    table = data.pivot_table(index=index, columns=columns, values=values, aggfunc="mean")
    figure, axis = plt.subplots(figsize=(max(5.0, 0.9 * len(table) + 3), 3.6))
    table.plot.bar(ax=axis, rot=20)
    axis.set_title(title)
    axis.set_ylabel(ylabel)
    axis.legend(fontsize=7)
    return _png(figure)


def plots(data: ReportData) -> dict[str, str]:
    """Every figure as a data URI, keyed by section; a section with nothing to plot is left out."""
    out: dict[str, str] = {}
    systems = data.frames["report_systems"].copy()
    if not systems.empty:
        systems["label"] = (
            systems["system"]
            + systems["setting"].map(lambda v: f" [{v}]" if v else "")
            + " / "
            + systems["benchmark"]
        )
        long = systems.melt(
            id_vars=["label"],
            value_vars=["overall", "pass_at_k", "evidence_recall"],
            var_name="metric",
            value_name="value",
        )
        image = _bars(
            long, "label", "metric", "value", "Overall, Pass@k and evidence recall per run", "score"
        )
        if image:
            out["systems"] = image
    qtypes = data.frames["report_qtypes"].copy()
    if not qtypes.empty:
        # Ablation runs have their own figure: the question types show the systems as configured.
        qtypes = qtypes[qtypes["setting"].isin(["", "full"])]
        qtypes["series"] = qtypes["system"] + " / " + qtypes["benchmark"]
        metric = "overall" if qtypes["overall"].notna().any() else "evidence_recall"
        image = _bars(
            qtypes, "qtype", "series", metric, f"{metric.replace('_', ' ')} per question type", metric
        )
        if image:
            out["qtypes"] = image
    ablation = data.frames["report_ablation"].copy()
    if not ablation.empty:
        metric = "overall_delta" if ablation["overall_delta"].notna().any() else "evidence_recall_delta"
        image = _bars(
            ablation[ablation["setting"] != "full"],
            "setting",
            "benchmark",
            metric,
            f"ablation: {metric.replace('_', ' ')} against the full system",
            "change",
        )
        if image:
            out["ablation"] = image
    tools = data.frames["report_tool_use"].copy()
    if not tools.empty:
        tools["series"] = tools["system"] + " / " + tools["benchmark"]
        image = _bars(tools, "tool", "series", "calls_per_question", "tool calls per question", "calls")
        if image:
            out["tools"] = image
    latency = data.frames["report_latency_tokens"].copy()
    if not latency.empty:
        latency["label"] = latency["system"] + " / " + latency["benchmark"]
        figure, axes = plt.subplots(1, 2, figsize=(10, 3.4))
        latency.plot.bar(
            x="label", y=["latency_ms_p50", "latency_ms_p95"], ax=axes[0], rot=20, title="answer latency (ms)"
        )
        latency.plot.bar(
            x="label",
            y=["llm_tokens_per_question", "evidence_tokens_mean"],
            ax=axes[1],
            rot=20,
            title="tokens per question",
        )
        out["latency"] = _png(figure)
    judge = data.frames["report_judge_agreement"].copy()
    if not judge.empty:
        judge["label"] = judge["system"] + " / " + judge["benchmark"]
        figure, axis = plt.subplots(figsize=(6, 3.2))
        judge.plot.bar(
            x="label",
            y=["pairwise_agreement", "krippendorff_alpha"],
            ax=axis,
            rot=20,
            title="judge agreement (5 votes per answer)",
        )
        axis.set_ylim(min(0.0, float(judge["krippendorff_alpha"].min() or 0)), 1.0)
        out["judge"] = _png(figure)
    return out


def _table(frame: pd.DataFrame, columns: list[str] | None = None) -> str:
    if frame.empty:
        return '<p class="note">no rows</p>'
    shown = frame[columns] if columns else frame
    cells = shown.map(
        lambda v: (
            "—"
            if v is None or (isinstance(v, float) and pd.isna(v))
            else (f"{v:.4f}" if isinstance(v, float) else str(v))
        )
    )
    return cells.to_html(index=False, escape=True, border=0)


SECTIONS = (
    (
        "systems",
        "Overall and Pass@k per system and benchmark",
        "report_systems",
        [
            "system",
            "setting",
            "benchmark",
            "n",
            "samples",
            "offline",
            "overall",
            "pass_at_k",
            "evidence_recall",
            "mcq_accuracy",
        ],
    ),
    (
        "qtypes",
        "Per question type",
        "report_qtypes",
        ["system", "setting", "benchmark", "qtype", "n", "overall", "evidence_recall"],
    ),
    (
        "ablation",
        "Ablations against the full system",
        "report_ablation",
        [
            "setting",
            "benchmark",
            "n",
            "overall",
            "overall_delta",
            "pass_at_k",
            "evidence_recall",
            "evidence_recall_delta",
            "llm_tokens_per_q",
            "latency_ms_p50",
        ],
    ),
    (
        "tools",
        "Tool use (qa_traces)",
        "report_tool_use",
        ["system", "benchmark", "tool", "calls", "calls_per_question"],
    ),
    (
        "latency",
        "Latency and tokens per question",
        "report_latency_tokens",
        [
            "system",
            "benchmark",
            "questions",
            "latency_ms_p50",
            "latency_ms_p95",
            "evidence_tokens_mean",
            "llm_tokens_per_question",
        ],
    ),
    (
        "judge",
        "Judge agreement (appendix B.3)",
        "report_judge_agreement",
        [
            "system",
            "benchmark",
            "judge_model",
            "judged_answers",
            "votes",
            "pairwise_agreement",
            "krippendorff_alpha",
        ],
    ),
)


def render_html(data: ReportData, title: str = "NKW evaluation report") -> str:
    images = plots(data)
    parts = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{STYLE}</style></head><body><h1>{html.escape(title)}</h1>",
        f"<p class='note'>{len(data.runs)} run(s). Overall: judge majority of 5 votes (free-form) "
        "or option match "
        "(multiple choice); — where it does not apply (offline free-form answers are not judged; Pass@k "
        "needs sampled LLM answers).</p>",
    ]
    for key, heading, query, columns in SECTIONS:
        frame = data.frames[query]
        parts.append(f"<h2 id='{key}'>{html.escape(heading)}</h2>")
        if key in images:
            parts.append(f"<img alt='{html.escape(heading)}' src='{images[key]}'>")
        parts.append(_table(frame, [c for c in columns if c in frame.columns]))
    parts.append("</body></html>")
    return "\n".join(parts)


def write_report(
    workspace: Workspace, out: Path, runs: list[str] | None = None, ablation_id: str | None = None
) -> dict:
    data = load_report_data(workspace, runs, ablation_id)
    text = render_html(data)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    return {
        "out": str(out),
        "runs": len(data.runs),
        "bytes": len(text.encode("utf-8")),
        "plots": text.count("data:image/png;base64,"),
    }
