"""Every-gold scene recall of an ablation grid, per setting and question type, with 95 % paired
bootstrap intervals on each difference from the full system: which component helps which type.

Reads the `qa_answers` of each setting's runs (a build-time setting's answers live in its variant
workspace); questions of several files are kept apart by benchmark.
"""

from __future__ import annotations

import pandas as pd

from tasks.evaluate.intervals import scene_hits, setting_intervals
from tasks.tables.io import Workspace, read_frame

REFERENCE = "full"


def _answers(base: Workspace, setting: str, workspace: str, run_id: str) -> pd.DataFrame:
    where = base if workspace == "base" else Workspace.at(base.root / "variants" / setting)
    return read_frame(where, "qa_answers", part=run_id)


def setting_hits(base: Workspace, rows: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per setting, one row per answered question with mapped gold scenes (any / every)."""
    hits: dict[str, list[pd.DataFrame]] = {}
    summary = rows[rows["qtype"] == "*"]
    for row in summary.to_dict("records"):
        frame = scene_hits(_answers(base, row["setting"], row["workspace"], row["run_id"]))
        frame["qid"] = str(row["benchmark"]) + ":" + frame["qid"].astype(str)
        hits.setdefault(row["setting"], []).append(frame)
    return {setting: pd.concat(frames, ignore_index=True) for setting, frames in hits.items()}


def scene_intervals(base: Workspace, rows: pd.DataFrame, by: str | None = "qtype") -> pd.DataFrame:
    """The every-gold table with intervals; empty when no question has scene gold or the grid has
    no full-system setting to compare with."""
    hits = setting_hits(base, rows)
    if REFERENCE not in hits or all(frame.empty for frame in hits.values()):
        return pd.DataFrame()
    return setting_intervals(hits, REFERENCE, by)


def format_scene_intervals(table: pd.DataFrame) -> list[str]:
    """Lines of the every-gold table: one per setting and group, difference and interval beside."""
    if table.empty:
        return []
    lines = [
        "every gold scene (questions with mapped scene gold), difference from the full system, 95 % interval:"
    ]
    for row in table.to_dict("records"):
        change = (
            ""
            if row["setting"] == REFERENCE
            else (
                f"  {row['difference']:+.3f} [{row['low']:+.3f}, {row['high']:+.3f}]"
                + (" *" if row["excludes_zero"] else "")
            )
        )
        lines.append(
            f"  {row['setting']:<18} {row['group'][:34]:<34} n={row['n']:<5} {row['every']:.3f}{change}"
        )
    lines.append("  * the interval excludes 0")
    return lines
