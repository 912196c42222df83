"""The paper's ablation table on the shared dev sets, through the CLI, with wall times.

    python benchmarks/bench_ablation.py --workspace W [--limit N] [--embeddings hashing]
    python benchmarks/bench_ablation.py --workspace W --llm [--limit 8] [--disagree 0.25]

Offline (default): builds W from the three dev sets' documents unless it exists, runs
`nkw ablate` over every setting and `nkw report`. With --llm the repository's test server (the
evaluation fake model, tests/fixtures/eval_llm.py) is answerer, builder and judge: W is built
through it, `nkw ablate --samples 5` gives Overall and Pass@5 from judge votes, and
`nkw eval --samples 5` on STAGE checks 5 distinct samples per question, 5 votes per sample and
Krippendorff's α against the `krippendorff` package. The data folder defaults to the shared
dev sets beside the clone (or NKW_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import krippendorff  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from flows.evaluation.ablation import ABLATIONS  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tests.fixtures.browser import png_pixels, screenshot  # noqa: E402
from tests.fixtures.eval_llm import eval_responder  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402

BENCHMARKS = ("stage", "fairytaleqa", "quality")
NAMES = {"stage": "STAGE", "fairytaleqa": "FairytaleQA", "quality": "QuALITY"}


def nkw(*args: str) -> tuple[float, str]:
    """Run one CLI command; (wall seconds, stdout). A failed command stops the benchmark."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"nkw {args[0]} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return time.perf_counter() - started, done.stdout


def cell(value: object, base: object, delta: bool) -> str:
    if value is None or pd.isna(value):
        return "—"
    if not delta or base is None or pd.isna(base):
        return f"{value:.3f}"
    return f"{value:.3f} ({value - base:+.3f})"


def table(rows: pd.DataFrame, llm: bool) -> str:
    """Setting × benchmark: Overall (Δ), Pass@k, evidence recall (Δ) per benchmark."""
    whole = rows[rows["qtype"] == "*"]
    full = {r["benchmark"]: r for r in whole[whole["setting"] == "full"].to_dict("records")}
    columns = []
    for name in BENCHMARKS:
        columns += [(name, "overall")] + ([(name, "pass_at_k")] if llm else []) + [(name, "evidence_recall")]
    head = ["setting"] + [f"{NAMES[b]} {m.replace('_', ' ')}" for b, m in columns]
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for setting in [s for s in ABLATIONS if s in set(whole["setting"])]:
        mine = {r["benchmark"]: r for r in whole[whole["setting"] == setting].to_dict("records")}
        cells = [ABLATIONS[setting].label]
        for bench, metric in columns:
            row, base = mine.get(bench, {}), full.get(bench, {})
            cells.append(cell(row.get(metric), base.get(metric), setting != "full" and metric != "pass_at_k"))
        lines.append(" | ".join(cells))
    counts = {r["benchmark"]: r["n"] for r in full.values()}
    lines.append("questions per benchmark: " + ", ".join(f"{NAMES[b]} {counts.get(b)}" for b in BENCHMARKS))
    return "\n".join(lines)


def check_eval(workspace: Workspace, report: dict) -> str:
    """5 distinct samples per free-form question, 5 votes per sample, α against `krippendorff`."""
    run_id = report["run_id"]
    answers = read_frame(workspace, "qa_answers", run_id)
    free = answers[answers["gold_option"].isna()]
    distinct = free.groupby("qid")["answer"].nunique()
    votes = read_frame(workspace, "judgments", run_id)
    votes = votes[votes["kind"] == "label"]  # rubric votes (whole-story answers) carry no label
    per_sample = votes.groupby(["qid", "sample"])["vote"].nunique()
    items = [list(g.sort_values("vote")["label"]) for _, g in votes.groupby(["qid", "sample"])]
    data = np.array(items, dtype=float).T
    alpha = krippendorff.alpha(reliability_data=data, level_of_measurement="nominal")
    protocol = report["protocol"]
    return (
        f"nkw eval --samples 5 ({report['benchmark']}, {answers['qid'].nunique()} questions, "
        f"{free['qid'].nunique()} free-form): "
        f"samples per question {sorted(set(answers.groupby('qid')['sample'].nunique()))}, "
        f"distinct free-form answers per question min {distinct.min()} max {distinct.max()}, "
        f"votes {len(votes)} ({sorted(set(per_sample))} per sample); Overall {protocol.get('overall')}, "
        f"Pass@5 {protocol.get('pass_at_k')}, pairwise agreement {protocol.get('judge_pairwise_agreement')}, "
        f"α {protocol.get('judge_alpha')} (krippendorff package: {alpha:.4f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True, help="base workspace (built here when missing)")
    shared = os.environ.get("NKW_SHARED_DATA", str(REPO.parent / "shared" / "data"))
    parser.add_argument("--data", default=shared, help="folder with stage/, fairytaleqa/, quality/")
    parser.add_argument("--limit", type=int, help="question budget per benchmark (default: every question)")
    parser.add_argument("--settings", default=",".join(ABLATIONS))
    parser.add_argument("--embeddings", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--llm", action="store_true", help="the test server as builder, answerer and judge")
    parser.add_argument("--disagree", type=float, default=0.25, help="share of judge votes flipped (--llm)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request (--llm)")
    parser.add_argument("--samples", type=int, help="answers per question (default 5 with --llm, else 1)")
    parser.add_argument("--report", help="HTML report to write (default: W/report.html)")
    parser.add_argument("--fresh", action="store_true", help="answer and judge again (stored runs ignored)")
    args = parser.parse_args()
    data = Path(args.data)
    documents = [str(data / b / "documents.jsonl") for b in BENCHMARKS]
    questions = [str(data / b / "questions.jsonl") for b in BENCHMARKS]
    workspace = Workspace.at(args.workspace)
    samples = args.samples or (5 if args.llm else 1)
    common = ["--workspace", args.workspace, "--embeddings", args.embeddings]
    server = judge = None
    if args.llm:
        server = FakeOpenAIServer(("eval-model",), eval_responder(args.disagree), args.latency).start()
        judge = FakeOpenAIServer(("judge-model",), eval_responder(args.disagree), args.latency).start()
        common += ["--llm-url", server.url, "--model", "eval-model"]
    judged = ["--judge-url", judge.url, "--judge-model", "judge-model"] if judge else []
    budget = (["--limit", str(args.limit)] if args.limit else []) + (["--fresh"] if args.fresh else [])
    times: dict[str, float] = {}
    try:
        if not workspace.exists() or not any(workspace.manifest_dir.glob("*.json")):
            times["build"], _ = nkw("build", *documents, *common, "--quiet")
        times["ablate"], out = nkw(
            "ablate", *common, *judged, "--questions", *questions, "--settings", args.settings,
            "--samples", str(samples), "--parallel", str(args.parallel), *budget, "--json",
        )  # fmt: skip
        result = json.loads(out)
        report = args.report or str(workspace.root / "report.html")
        times["report"], _ = nkw("report", "--workspace", args.workspace, "--out", report)
        shot = Path(report).with_suffix(".png")
        width, height, distinct = png_pixels(screenshot(Path(report), shot, 1200, 2400))
        size = shot.stat().st_size
        rendered = f"{shot.name}: {width}x{height}, {size} bytes, {distinct} distinct byte values"
        checked = None
        if args.llm:
            times["eval"], out = nkw(
                "eval", *common, *judged, "--questions", questions[0], "--samples", "5", *budget, "--json"
            )
            checked = check_eval(workspace, json.loads(out))
            requests = server.counts["chat"] + judge.counts["chat"]
    finally:
        for running in (server, judge):
            if running is not None:
                running.stop()
    rows = pd.DataFrame(result["rows"])
    print(f"ablation {result['ablation_id']} ({'test server' if args.llm else 'offline'}, {args.embeddings})")
    print(table(rows, args.llm))
    for name, stats in result["variants"].items():
        print(
            f"variant {name}: {stats['stages_reused']} stage runs reused, {stats['stages_built']} rebuilt "
            f"({', '.join(stats['rebuilt']) or 'none'}) in {stats['seconds']} s"
        )
    for note in result["notes"]:
        print(f"note: {note}")
    if checked:
        print(checked)
        print(f"chat requests to the test server (answerer + judge): {requests}")
    print(f"report {report} rendered in headless Chromium: {rendered}")
    print("wall times: " + ", ".join(f"{k} {v:.1f} s" for k, v in times.items()))


if __name__ == "__main__":
    main()
