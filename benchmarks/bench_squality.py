"""Whole-story questions: SQuALITY through NKW and the two hybrid baselines at the same output length,
ROUGE-1/2/L F1 against the best of each question's four references, overall, for the plot question,
for the other (aspect) questions and per kind of whole-story question, with NKW's difference from
each baseline and its 95 % paired bootstrap interval.

    python benchmarks/bench_squality.py --workspace W [--questions Q.jsonl] [--markdown]
        [--config FILE] [--llm-url URL --model NAME] [--systems nkw,hybrid,hybrid_fine] [--llm-systems nkw]
        [--no-judge]

The workspace must hold the stories (`nkw build ../shared/data/squality-train/documents.jsonl
--workspace W --no-prefect`). `--systems` answer offline (extractive). With an LLM (`--llm-url` or the
config's `[llm] url`), `--llm-systems` answer with the model too (labelled `<system>+llm`), and the
model (or `[evaluate] judge_url` / `judge_model`) judges every answer of the run: whole-story answers
with the rubric, whose means are reported beside ROUGE; `--no-judge` leaves the judge out (a small
model's rubric is no measure, and judging doubles the run).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.answer_questions import QueryEngine  # noqa: E402
from flows.evaluation.compare_systems import SYSTEMS  # noqa: E402
from flows.evaluation.evaluate import EvalReport, evaluate  # noqa: E402
from flows.evaluation.judging import judge_client  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.evaluate.intervals import paired_bootstrap  # noqa: E402
from tasks.evaluate.metrics import ROUGE_METRICS  # noqa: E402
from tasks.evaluate.rubric import RUBRIC_CRITERIA  # noqa: E402
from tasks.llm.client.factory import build_llm_client  # noqa: E402
from tasks.query.question_scope import read_scope  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

SHARED = REPO.parent / "shared" / "data"
BASELINES = ("hybrid", "hybrid_fine")
LLM_SUFFIX = "+llm"  # a system answering with the model: "nkw+llm"
RUBRIC_GROUPS = {"all": None, "qtype plot": "plot", "qtype aspect": "aspect"}


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


def rubric_of(report: EvalReport, group: str) -> dict:
    """The run's rubric means for a group of `RUBRIC_GROUPS` ({} when the judge scored none there)."""
    qtype = RUBRIC_GROUPS.get(group, "")
    if qtype == "":
        return {}
    summary = report.rubric if qtype is None else report.rubric.get("by_qtype", {}).get(qtype, {})
    return {f"rubric_{k}": summary[k] for k in (*RUBRIC_CRITERIA, "score", "judged_answers") if k in summary}


def summary_rows(frame: pd.DataFrame, reports: dict[str, EvalReport] | None = None) -> list[dict]:
    rows = []
    for label, mask in groups(frame):
        part = frame[mask]
        for system in dict.fromkeys(frame["system"]):
            mine = part[part["system"] == system]
            if mine.empty:
                continue
            row = {"group": label, "system": system, "n": int(mine["qid"].nunique())}
            row.update({m: round(float(mine[m].mean()), 4) for m in ROUGE_METRICS})
            row["words"] = round(float(mine["words"].mean()), 1)
            row.update(rubric_of(reports[system], label) if reports else {})
            if system.startswith("nkw"):
                for baseline in BASELINES:
                    theirs = part[part["system"] == baseline].set_index("qid")
                    if theirs.empty:
                        continue
                    ours = mine.set_index("qid").loc[theirs.index]
                    for metric in ("rouge_2_f1", "rouge_l_f1"):
                        diff, low, high = paired_bootstrap(
                            theirs[metric].to_numpy(float), ours[metric].to_numpy(float)
                        )
                        row[f"{metric} vs {baseline}"] = [round(diff, 4), round(low, 4), round(high, 4)]
            rows.append(row)
    return rows


def markdown(rows: list[dict]) -> str:
    rubric = any("rubric_score" in row for row in rows)
    lines = [
        "| questions | system | n | ROUGE-1 | ROUGE-2 | ROUGE-L | words | NKW − hybrid (R-2; R-L) | "
        "NKW − hybrid_fine (R-2; R-L) |"
        + (" coverage | faithfulness | coherence | rubric score |" if rubric else ""),
        "|---|---|---|---|---|---|---|---|---|" + ("---|---|---|---|" if rubric else ""),
    ]

    def judged(row: dict) -> str:
        if not rubric:
            return ""
        if "rubric_score" not in row:
            return " | | | |"
        return (
            "".join(f" {row[f'rubric_{c}']:.2f} |" for c in RUBRIC_CRITERIA) + f" {row['rubric_score']:.3f} |"
        )

    def interval(row: dict, baseline: str) -> str:
        parts = [row.get(f"{m} vs {baseline}") for m in ("rouge_2_f1", "rouge_l_f1")]
        return "; ".join(f"{d:+.4f} [{lo:+.4f}, {hi:+.4f}]" for d, lo, hi in parts) if parts[0] else ""

    for row in rows:
        lines.append(
            f"| {row['group']} | {row['system']} | {row['n']} | {row['rouge_1_f1']:.4f} | "
            f"{row['rouge_2_f1']:.4f} | {row['rouge_l_f1']:.4f} | {row['words']:.0f} | "
            f"{interval(row, 'hybrid')} | {interval(row, 'hybrid_fine')} |" + judged(row)
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(SHARED / "squality-train" / "questions.jsonl"))
    parser.add_argument("--markdown", action="store_true", help="print a Markdown table (default JSON)")
    parser.add_argument("--config", help="TOML settings ([llm], [answer], [evaluate] ...)")
    parser.add_argument("--llm-url", help="OpenAI-compatible server of the model (else the config's)")
    parser.add_argument("--model", help="model name on that server")
    parser.add_argument("--systems", default=",".join(SYSTEMS), help="systems answering offline")
    parser.add_argument("--llm-systems", default="", help="systems answering with the model, e.g. nkw")
    parser.add_argument(
        "--no-judge", action="store_true", help="ROUGE only: no rubric judge even with a model configured"
    )
    args = parser.parse_args()
    overrides = {"llm": {"url": args.llm_url, "model": args.model}}
    settings = load_settings(Path(args.config) if args.config else None, overrides)
    workspace = Workspace.at(args.workspace)
    key = os.environ.get("NKW_API_KEY") or os.environ.get("OPENAI_API_KEY")
    llm = build_llm_client(settings.llm, key, workspace.cache_dir / "llm")
    judge = None if args.no_judge else judge_client(settings, key, workspace) or llm
    offline = [s for s in args.systems.split(",") if s]
    with_llm = [s for s in args.llm_systems.split(",") if s]
    if with_llm and llm is None:
        parser.error("--llm-systems needs a model: --llm-url and --model, or [llm] url in --config")
    offline_settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"url": None})})
    runs = [(s, s, offline_settings, None) for s in offline] + [
        (s + LLM_SUFFIX, s, settings, llm) for s in with_llm
    ]
    reports: dict[str, EvalReport] = {}
    seconds: dict[str, float] = {}
    for label, system, run_settings, client in runs:
        started = time.perf_counter()
        engine = QueryEngine(workspace, run_settings, llm=client)
        # fresh: answers of an earlier tree under the same settings are not reused from checkpoints
        reports[label] = evaluate(
            workspace,
            Path(args.questions),
            run_settings,
            system=system,
            engine=engine,
            judge=judge,
            fresh=True,
        )
        seconds[label] = round(time.perf_counter() - started, 1)
        print(f"{label}: {len(reports[label].rows)} answers in {seconds[label]:.0f} s", file=sys.stderr)
    for client in {id(c): c for c in (llm, judge) if c is not None}.values():
        client.close()
    frame = answer_frame({label: report.rows for label, report in reports.items()})
    rows = summary_rows(frame, reports)
    if args.markdown:
        print(markdown(rows))
        print(
            f"\nanswer length: {settings.answer.work_answer_words} words for the plot, "
            f"{settings.answer.aspect_answer_words} for another whole-story question, one sentence "
            "otherwise; p50 latency "
            + ", ".join(
                f"{label} {np.median(r.rows['latency_ms'].dropna()):.0f} ms" for label, r in reports.items()
            )
            + "; run time "
            + ", ".join(f"{label} {s:.0f} s" for label, s in seconds.items())
            + (f"; judge {judge.model}" if judge is not None else "")
        )
        offline_answers = {
            label: int(r.rows["is_offline"].fillna(True).sum()) for label, r in reports.items()
        }
        print("answers labelled offline: " + ", ".join(f"{k} {v}" for k, v in offline_answers.items()))
    else:
        print(json.dumps({"rows": rows, "seconds": seconds}, indent=1))


if __name__ == "__main__":
    main()
