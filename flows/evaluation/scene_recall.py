"""Evidence recall of NKW and the baselines on the same questions, read three ways: any gold scene
found, every gold scene found, and NKW's recall when it may keep only as many distinct scenes as a
baseline used on that question (so a gain is not only from spreading the budget over more scenes).
The 450-word hybrid is always there; the fine-window hybrid (`hybrid_fine`) when its run is given.

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
    nkw: pd.DataFrame,
    hybrid: pd.DataFrame,
    gold: dict[str, list[str]],
    hybrid_fine: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """One row per question with mapped gold answered by every given system: each system's
    any/every/fraction and distinct scene count, and NKW's figures at each baseline's scene count."""
    systems = [("nkw", nkw), ("hybrid", hybrid)] + (
        [("hybrid_fine", hybrid_fine)] if hybrid_fine is not None else []
    )
    keyed = {
        name: frame[(frame["status"] == "answered") & (frame["sample"] == 0)].set_index("qid")
        for name, frame in systems
    }
    rows = []
    for qid, row in keyed["nkw"].iterrows():
        sections = gold.get(qid) or []
        if not sections or any(qid not in keyed[name].index for name, _ in systems):
            continue
        base = keyed["hybrid"].loc[qid]
        ours = question_scene_recall(sections, as_list(row["evidence_section_ids"]))
        theirs = question_scene_recall(sections, as_list(base["evidence_section_ids"]))
        equal = question_scene_recall(sections, as_list(row["evidence_section_ids"]), keep=theirs["scenes"])
        record = {
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
        if hybrid_fine is not None:
            record.update(_fine_figures(sections, row, keyed["hybrid_fine"].loc[qid]))
        rows.append(record)
    return pd.DataFrame(rows)


def _fine_figures(sections: list[str], nkw: pd.Series, fine: pd.Series) -> dict[str, Any]:
    """The fine-window baseline's figures and NKW's at its number of distinct scenes."""
    theirs = question_scene_recall(sections, as_list(fine["evidence_section_ids"]))
    equal = question_scene_recall(sections, as_list(nkw["evidence_section_ids"]), keep=theirs["scenes"])
    return {
        **{f"hybrid_fine_{k}": v for k, v in theirs.items()},
        **{f"nkw_equal_fine_{k}": v for k, v in equal.items() if k != "scenes"},
        "hybrid_fine_latency_ms": fine.get("latency_ms"),
    }


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
# Present when the fine-window baseline's run was given (nkw_equal_fine_*: NKW cut to its scene count).
FINE_FIGURES = (
    "hybrid_fine_any",
    "hybrid_fine_every",
    "nkw_equal_fine_every",
    "hybrid_fine_fraction",
    "nkw_equal_fine_fraction",
    "hybrid_fine_scenes",
)


def summarize_scene_recall(rows: pd.DataFrame, by: str | None = None) -> pd.DataFrame:
    """Means of the figures overall (by None) or per `by` value, with the question count and the
    latency percentiles of each system."""
    groups = [("all", rows)] if by is None else list(rows.groupby(rows[by].fillna("(none)")))
    out = []
    for name, group in groups:
        record: dict[str, Any] = {"group": name, "n": len(group)}
        figures = FIGURES + tuple(f for f in FINE_FIGURES if f in rows.columns)
        record.update({f: round(float(group[f].mean()), 3) for f in figures})
        for system in ("nkw", "hybrid", "hybrid_fine"):
            if f"{system}_latency_ms" not in rows.columns:
                continue
            latency = group[f"{system}_latency_ms"].dropna().astype(float)
            record[f"{system}_p50_ms"] = round(float(latency.quantile(0.5)), 1) if len(latency) else None
            record[f"{system}_p95_ms"] = round(float(latency.quantile(0.95)), 1) if len(latency) else None
        out.append(record)
    return pd.DataFrame(out)
