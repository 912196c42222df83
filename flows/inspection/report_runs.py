"""How the report names and orders runs. A run's label says what it is: system, benchmark, settings
(the ablation setting or the answering settings that differ from the defaults, the build variant,
the question limit and samples), the answering model, and when it started. Every table and chart
lists runs in one order: by start, then run id (a run without a start record last)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pandas as pd
import pyarrow as pa

RUN_OF_FILE = re.compile(r"__answer-(run_[0-9a-f]+)\.parquet$")
SEPARATOR = " · "


def answer_models(calls: pa.Table) -> dict[str, str]:
    """Per run, the models its answering LLM calls reported (several joined by ', ')."""
    if not len(calls) or "model" not in calls.column_names:
        return {}
    frame = calls.select(["filename", "model"]).to_pandas()
    frame["run_id"] = frame["filename"].str.extract(RUN_OF_FILE, expand=False)
    frame = frame.dropna(subset=["run_id", "model"])
    return {run: ", ".join(sorted(set(models))) for run, models in frame.groupby("run_id")["model"]}


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and pd.isna(value)) and value != ""


def model_of(row: dict[str, Any], models: dict[str, str]) -> str:
    """The answering model: the one its calls reported, 'offline' for extractive answers, else '—'."""
    if models.get(row["run_id"]):
        return models[row["run_id"]]
    return "offline" if row.get("is_offline") is True else "—"


def started_minute(row: dict[str, Any]) -> str:
    """The run's start as `YYYY-MM-DD HH:MM` (UTC), or 'start unknown'."""
    moment = row.get("started")
    if not isinstance(moment, str) or len(moment) < 16:
        return "start unknown"
    return moment[:16].replace("T", " ")


def settings_of(row: dict[str, Any]) -> str:
    """What the run changed: its ablation setting, else its non-default settings, else 'defaults';
    with its build variant, question limit and samples when they are not the plain ones."""
    parts = [row.get("setting") or row.get("settings") or "defaults"]
    if row.get("variant") and row["variant"] != row.get("setting"):
        parts.append(f"on {row['variant']}")
    if _present(row.get("question_limit")):
        parts.append(f"limit {int(row['question_limit'])}")
    if _present(row.get("samples")) and int(row["samples"]) > 1:
        parts.append(f"{int(row['samples'])} samples")
    return ", ".join(parts)


def _seconds(row: dict[str, Any]) -> str:
    moment = row.get("started")
    return f":{moment[17:19]}" if isinstance(moment, str) and len(moment) >= 19 else ""


def label_runs(runs: pd.DataFrame, models: dict[str, str] | None = None) -> dict[str, str]:
    """A label per run: system · benchmark · settings · model · start. Runs that still share one
    (started in the same minute with the same everything) get their start's seconds, then their id."""
    models = models or {}
    rows = runs.to_dict("records")
    labels = {
        row["run_id"]: SEPARATOR.join(
            [
                str(row["system"]),
                str(row["benchmark"]),
                settings_of(row),
                model_of(row, models),
                started_minute(row),
            ]
        )
        for row in rows
    }
    for suffix in (_seconds, lambda row: f" ({row['run_id']})"):
        counts = Counter(labels.values())
        labels = {
            row["run_id"]: labels[row["run_id"]] + (suffix(row) if counts[labels[row["run_id"]]] > 1 else "")
            for row in rows
        }
    return labels


def run_order(runs: pd.DataFrame) -> dict[str, int]:
    """Each run's place: by start (ISO strings sort as times), then run id; unknown starts last."""
    keys = [
        (not isinstance(started, str) or not started, started if isinstance(started, str) else "", run_id)
        for run_id, started in zip(runs["run_id"], runs.get("started", [None] * len(runs)))
    ]
    return {key[2]: place for place, key in enumerate(sorted(keys))}


def in_run_order(frame: pd.DataFrame, order: dict[str, int]) -> pd.DataFrame:
    """The frame's rows by their run's place, keeping the query's order within a run."""
    if frame.empty or "run_id" not in frame:
        return frame
    place = frame["run_id"].map(order).fillna(len(order))
    return (
        frame.assign(_place=place)
        .sort_values("_place", kind="stable")
        .drop(columns="_place")
        .reset_index(drop=True)
    )
