"""Scene recall per question and paired bootstrap intervals on the difference between two settings
answering the same questions: how much a component is worth, and whether that is more than noise.

Pure: takes `qa_answers` rows (gold and evidence section ids per question) and returns figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from tasks.tables.io import as_list

RESAMPLES = 2000
LEVEL = 0.95


def scene_hits(answers: pd.DataFrame) -> pd.DataFrame:
    """One row per question with mapped gold scenes (first sample): any / every gold scene among the
    evidence, with its type and language."""
    rows = []
    first = answers[(answers["status"] == "answered") & (answers["sample"] == 0)]
    for row in first.to_dict("records"):
        gold = set(as_list(row.get("gold_section_ids")))
        if not gold or as_list(row.get("gold_unmapped")):
            continue
        found = gold & set(as_list(row.get("evidence_section_ids")))
        rows.append(
            {
                "qid": row["qid"],
                "qtype": row.get("qtype") or "(none)",
                "language": row.get("language") or "",
                "any": float(bool(found)),
                "every": float(found == gold),
            }
        )
    return pd.DataFrame(rows, columns=["qid", "qtype", "language", "any", "every"])


def paired_bootstrap(
    base: np.ndarray, other: np.ndarray, resamples: int = RESAMPLES, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """(mean of other - base, low, high): a percentile interval over questions resampled with
    replacement, the same questions for both settings (the pairing removes question difficulty)."""
    if len(base) != len(other):
        raise ValueError("paired samples must have the same length")
    if len(base) == 0:
        return 0.0, 0.0, 0.0
    differences = np.asarray(other, dtype=float) - np.asarray(base, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(differences), size=(resamples, len(differences)))
    means = differences[picks].mean(axis=1)
    tail = (1 - level) / 2
    return (float(differences.mean()), float(np.quantile(means, tail)), float(np.quantile(means, 1 - tail)))


def setting_intervals(
    hits: dict[str, pd.DataFrame], reference: str = "full", by: str | None = "qtype", metric: str = "every"
) -> pd.DataFrame:
    """Per setting and group (all, then each `by` value): n, the metric, and its difference from the
    reference setting with a 95 % paired bootstrap interval over the questions both answered."""
    if reference not in hits:
        raise ValueError(f"no answers of the reference setting {reference!r}")
    base = hits[reference].set_index("qid")
    rows: list[dict[str, Any]] = []
    for setting, frame in hits.items():
        joined = base.join(frame.set_index("qid")[[metric]].add_suffix("_other"), how="inner")
        groups = [("all", joined)] + (sorted(joined.groupby(by), key=lambda g: str(g[0])) if by else [])
        for name, group in groups:
            diff, low, high = paired_bootstrap(group[metric].to_numpy(), group[f"{metric}_other"].to_numpy())
            rows.append(
                {
                    "setting": setting,
                    "group": str(name),
                    "n": len(group),
                    metric: round(float(group[f"{metric}_other"].mean()), 4) if len(group) else None,
                    "difference": round(diff, 4),
                    "low": round(low, 4),
                    "high": round(high, 4),
                    "excludes_zero": bool(setting != reference and (low > 0 or high < 0)),
                }
            )
    return pd.DataFrame(rows)
