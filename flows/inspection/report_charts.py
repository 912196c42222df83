"""The report's figures as PNG data URIs (matplotlib, no window). Every bar is one run or one
ablation setting, named on its axis or in its legend: values are placed, never averaged."""

from __future__ import annotations

import base64
import io
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only, never a window
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

NAMES = {
    "overall": "Overall",
    "pass_at_k": "Pass@k",
    "evidence_recall": "evidence recall",
    "latency_ms_p50": "p50",
    "latency_ms_p95": "p95",
    "pairwise_agreement": "pairwise agreement",
    "krippendorff_alpha": "Krippendorff alpha",
}
DELTAS = {"evidence_recall_delta": "evidence recall", "overall_delta": "Overall", "pass_at_k_delta": "Pass@k"}
LINE_CHARS = 34  # a run label on an axis or in a legend is set on lines of about this length


def wrapped(label: Any) -> str:
    """A label on lines at its ` · ` breaks (a run label's parts stay whole), about LINE_CHARS long."""
    lines: list[str] = []
    for part in str(label).split(" · "):
        if lines and len(lines[-1]) + 3 + len(part) <= LINE_CHARS:
            lines[-1] += " · " + part
        else:
            lines.append(part)
    return "\n".join(lines)


def png(figure: Any) -> str:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def bars(
    frame: pd.DataFrame, index: str, columns: str, values: str, title: str, ylabel: str, stacked: bool = False
) -> str | None:
    """Grouped (or stacked) bars of `values`, one per (index, columns) pair; None when there is
    nothing to draw. A pair given twice is a labelling mistake, not something to average: it raises."""
    data = frame.dropna(subset=[values]).copy()
    data[columns] = data[columns].map(lambda v: NAMES.get(v, v))
    if data.empty:
        return None
    if data.duplicated([index, columns]).any():
        raise ValueError(f"two values for one bar in {title!r}: labels must name each run")
    table = data.pivot(index=index, columns=columns, values=values)
    table = table.reindex(index=list(dict.fromkeys(data[index])), columns=list(dict.fromkeys(data[columns])))
    table = table.rename(index=wrapped, columns=wrapped)
    # Horizontal bars: a run label is several lines long, which fits beside a bar and not under it.
    lines = max(str(label).count("\n") + 1 for label in table.index)
    per_row = max(0.17 * lines, 0.3 if stacked else 0.12 * table.shape[1] + 0.1)
    figure, axis = plt.subplots(figsize=(9.0, min(40.0, max(2.6, len(table) * per_row + 1.1))))
    colormap = "tab20" if table.shape[1] > 10 else None  # ten colours repeat: no two series alike
    table.plot.barh(ax=axis, width=0.8, stacked=stacked, colormap=colormap)
    axis.invert_yaxis()  # the first run on top, as in the tables
    axis.set_title(title)
    axis.set_xlabel(ylabel)
    axis.set_ylabel("")
    axis.axvline(0, color="#444", linewidth=0.6)
    axis.tick_params(axis="y", labelsize=8)
    axis.legend(fontsize=7, title=None, loc="upper left", bbox_to_anchor=(1.01, 1))  # never over a bar
    return png(figure)


def ablation_chart(ablation: pd.DataFrame) -> tuple[str | None, str]:
    """The change of each metric that moved, per setting against `full`; the absolute figures when
    none moved (an all-zero chart would look blank). Returns (image, what it shows)."""
    rows = ablation[ablation["setting"] != "full"]
    moving = [m for m in DELTAS if m in rows and (rows[m].dropna().abs() > 1e-9).any()]
    series = rows["benchmark"].nunique() > 1
    if moving:
        long = rows.melt(id_vars=["label", "benchmark"], value_vars=moving, var_name="metric", value_name="v")
        long["metric"] = long["metric"].map(DELTAS) + (" / " + long["benchmark"] if series else "")
        shown = "change against the full system: " + ", ".join(DELTAS[m] for m in moving)
        return bars(long, "label", "metric", "v", f"ablation: {shown}", "change"), shown
    absolute = [m for m in ("overall", "evidence_recall") if ablation[m].notna().any()]
    long = ablation.melt(
        id_vars=["label", "benchmark"], value_vars=absolute, var_name="metric", value_name="v"
    )
    long["metric"] = long["metric"].map(NAMES) + (" / " + long["benchmark"] if series else "")
    shown = "no setting changed a metric: the figures themselves"
    return bars(long, "label", "metric", "v", f"ablation: {shown}", "score"), shown


def figures(frames: dict[str, pd.DataFrame]) -> dict[str, str]:
    """Every figure by section; a section with nothing to plot has none."""
    out: dict[str, str | None] = {}
    systems = frames["systems"]
    if not systems.empty:
        long = systems.melt(
            id_vars=["label"], value_vars=["overall", "pass_at_k", "evidence_recall"], var_name="metric"
        )
        out["systems"] = bars(
            long, "label", "metric", "value", "Overall, Pass@k and evidence recall", "score"
        )
    qtypes = frames["qtypes"]
    if not qtypes.empty:
        # Offline, Overall covers multiple-choice questions only: most types would have no bar.
        metric = "overall" if qtypes["overall"].notna().mean() >= 0.5 else "evidence_recall"
        out["qtypes"] = bars(
            qtypes, "qtype", "label", metric, f"{metric.replace('_', ' ')} per question type, per run", metric
        )
    ablation = frames["ablation"]
    if not ablation.empty:
        out["ablation"], _ = ablation_chart(ablation)
    tools = frames["tools"]
    if not tools.empty:
        out["tools"] = bars(
            tools, "label", "tool", "calls_per_question", "tool calls per question, per run", "calls", True
        )
    latency = frames["latency"]
    if not latency.empty:
        long = latency.melt(id_vars=["label"], value_vars=["latency_ms_p50", "latency_ms_p95"], var_name="q")
        out["latency"] = bars(long, "label", "q", "value", "answer latency (ms)", "ms")
    judge = frames["judge"]
    if not judge.empty:
        long = judge.melt(id_vars=["label"], value_vars=["pairwise_agreement", "krippendorff_alpha"])
        out["judge"] = bars(long, "label", "variable", "value", "judge agreement", "agreement")
    return {key: image for key, image in out.items() if image}
