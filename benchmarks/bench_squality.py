"""Whole-story questions: SQuALITY through NKW and the two hybrid baselines at the same output length,
ROUGE-1/2/L F1 against the best of each question's four references, overall, for the plot question,
for the other (aspect) questions and per kind of whole-story question, with NKW's difference from
each baseline and its 95 % paired bootstrap interval.

    python benchmarks/bench_squality.py --workspace W [--questions Q.jsonl] [--markdown]

The workspace must hold the stories (`nkw build ../shared/data/squality-train/documents.jsonl
--workspace W --no-prefect`). Offline unless the config names an LLM: the answers are extractive.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.answer_questions import QueryEngine  # noqa: E402
from flows.evaluation.compare_systems import SYSTEMS  # noqa: E402
from flows.evaluation.evaluate import evaluate  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.evaluate.intervals import paired_bootstrap  # noqa: E402
from tasks.evaluate.metrics import ROUGE_METRICS  # noqa: E402
from tasks.query.question_scope import read_scope  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

SHARED = REPO.parent / "shared" / "data"
BASELINES = ("hybrid", "hybrid_fine")


def answer_frame(rows_by_system: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per (system, question): its ROUGE scores, answer words and groups."""
    frames = []
    for system, rows in rows_by_system.items():
        answered = rows[(rows["status"] == "answered") & (rows["sample"] == 0)].copy()
        answered["system"] = system
        answered["words"] = answered["answer"].fillna("").str.split().str.len()
        answered["kind"] = [read_scope(q).kind or "local" for q in answered["question"]]
        frames.append(answered[["system", "qid", "qtype", "kind", "words", *ROUGE_METRICS]])
    return pd.concat(frames, ignore_index=True)


def groups(frame: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """(label, mask): all questions, the plot question, the aspect questions, then each kind the
    question reads as (plot, character, relationship, setting, theme, local)."""
    found = [("all", frame["qid"] == frame["qid"])]
    found += [(f"qtype {q}", frame["qtype"] == q) for q in sorted(frame["qtype"].dropna().unique())]
    found += [(f"reads as {k}", frame["kind"] == k) for k in sorted(frame["kind"].unique())]
    return found


def summary_rows(frame: pd.DataFrame) -> list[dict]:
    rows = []
    for label, mask in groups(frame):
        part = frame[mask]
        for system in SYSTEMS:
            mine = part[part["system"] == system]
            if mine.empty:
                continue
            row = {"group": label, "system": system, "n": int(mine["qid"].nunique())}
            row.update({m: round(float(mine[m].mean()), 4) for m in ROUGE_METRICS})
            row["words"] = round(float(mine["words"].mean()), 1)
            if system == "nkw":
                for baseline in BASELINES:
                    theirs = part[part["system"] == baseline].set_index("qid")
                    ours = mine.set_index("qid").loc[theirs.index]
                    for metric in ("rouge_2_f1", "rouge_l_f1"):
                        diff, low, high = paired_bootstrap(
                            theirs[metric].to_numpy(float), ours[metric].to_numpy(float)
                        )
                        row[f"{metric} vs {baseline}"] = [round(diff, 4), round(low, 4), round(high, 4)]
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    lines = [
        "| questions | system | n | ROUGE-1 | ROUGE-2 | ROUGE-L | words | NKW − hybrid (R-2; R-L) | "
        "NKW − hybrid_fine (R-2; R-L) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]

    def interval(row: dict, baseline: str) -> str:
        parts = [row.get(f"{m} vs {baseline}") for m in ("rouge_2_f1", "rouge_l_f1")]
        return "; ".join(f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi in parts) if parts[0] else ""

    for row in rows:
        lines.append(
            f"| {row['group']} | {row['system']} | {row['n']} | {row['rouge_1_f1']:.4f} | "
            f"{row['rouge_2_f1']:.4f} | {row['rouge_l_f1']:.4f} | {row['words']:.0f} | "
            f"{interval(row, 'hybrid')} | {interval(row, 'hybrid_fine')} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(SHARED / "squality-train" / "questions.jsonl"))
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (default JSON)")
    args = parser.parse_args()
    settings = load_settings()
    workspace = Workspace.at(args.workspace)
    engine = QueryEngine(workspace, settings)
    # fresh: answers of an earlier tree under the same settings are not reused from checkpoints
    reports = {
        system: evaluate(workspace, Path(args.questions), settings, system=system, engine=engine, fresh=True)
        for system in SYSTEMS
    }
    frame = answer_frame({system: report.rows for system, report in reports.items()})
    rows = summary_rows(frame)
    if args.markdown:
        print(markdown(rows))
        print(
            f"\nanswer length: {settings.answer.work_answer_words} words for the plot, "
            f"{settings.answer.aspect_answer_words} for another whole-story question, one sentence "
            "otherwise; "
            f"NKW p50 latency {np.median(reports['nkw'].rows['latency_ms'].dropna()):.0f} ms"
        )
    else:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
