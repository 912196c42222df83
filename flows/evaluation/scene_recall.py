"""Evidence recall of two systems on the same questions, read three ways: any gold scene found,
every gold scene found, and NKW's recall when it may keep only as many distinct scenes as the
baseline used on that question (so a gain is not only from spreading the budget over more scenes).

Pure: takes the `qa_answers` rows of one run per system and each question's gold section ids."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tasks.tables.io import as_list


def question_scene_recall(gold: list[str], evidence: list[str], keep: int | None = None) -> dict[str, Any]:
    """Any / every / fraction of `gold` among the first `keep` distinct sections of `evidence`."""
    scenes = list(dict.fromkeys(evidence))
    if keep is not None:
        scenes = scenes[:keep]
    found = set(gold) & set(scenes)
    return {
        "any": float(bool(found)),
        "every": float(found == set(gold)),
        "fraction": len(found) / len(set(gold)),
        "scenes": len(scenes),
    }


def scene_recall_rows(
    nkw: pd.DataFrame, hybrid: pd.DataFrame, gold: dict[str, list[str]]
) -> pd.DataFrame:
    """One row per question with mapped gold: both systems' any/every/fraction, their distinct
    scene counts, and NKW's figures at the baseline's scene count."""
    keyed = {
        name: frame[(frame["status"] == "answered") & (frame["sample"] == 0)].set_index("qid")
        for name, frame in (("nkw", nkw), ("hybrid", hybrid))
    }
    rows = []
    for qid, row in keyed["nkw"].iterrows():
        sections = gold.get(qid) or []
        if not sections or qid not in keyed["hybrid"].index:
            continue
        base = keyed["hybrid"].loc[qid]
        ours = question_scene_recall(sections, as_list(row["evidence_section_ids"]))
        theirs = question_scene_recall(sections, as_list(base["evidence_section_ids"]))
        equal = question_scene_recall(sections, as_list(row["evidence_section_ids"]), keep=theirs["scenes"])
        rows.append(
            {
                "qid": qid,
                "doc_id": row["doc_id"],
                "language": row.get("language"),
                "qtype": row.get("qtype") or "(none)",
                **{f"nkw_{k}": v for k, v in ours.items()},
                **{f"hybrid_{k}": v for k, v in theirs.items()},
                **{f"nkw_equal_{k}": v for k, v in equal.items() if k != "scenes"},
                "nkw_latency_ms": row.get("latency_ms"),
                "hybrid_latency_ms": base.get("latency_ms"),
            }
        )
    return pd.DataFrame(rows)


FIGURES = (
    "hybrid_any",
    "nkw_any",
    "hybrid_every",
    "nkw_every",
    "nkw_equal_every",
    "hybrid_fraction",
    "nkw_fraction",
    "nkw_equal_fraction",
    "hybrid_scenes",
    "nkw_scenes",
)


def summarize_scene_recall(rows: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Means of the figures overall (by None) or per `by` value, with the question count and the
    latency percentiles of each system."""
    groups = [("all", rows)] if by is None else list(rows.groupby(rows[by].fillna("(none)")))
    out = []
    for name, group in groups:
        record: dict[str, Any] = {"group": name, "n": len(group)}
        record.update({f: round(float(group[f].mean()), 3) for f in FIGURES})
        for system in ("nkw", "hybrid"):
            latency = group[f"{system}_latency_ms"].dropna().astype(float)
            record[f"{system}_p50_ms"] = round(float(latency.quantile(0.5)), 1) if len(latency) else None
            record[f"{system}_p95_ms"] = round(float(latency.quantile(0.95)), 1) if len(latency) else None
        out.append(record)
    return pd.DataFrame(out)
