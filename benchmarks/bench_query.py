"""Query benchmark: per-question answer latency offline (retrieval, tools, evidence board and
answer; model and document already loaded) over a built workspace, as p50 / p95 / max.

    python benchmarks/bench_query.py --workspace W --questions Q.jsonl [--system nkw|hybrid]

Without arguments it builds the shared STAGE dev set (or the samples) in a temporary
workspace first.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.runtime import configure_process  # noqa: E402

configure_process()  # the thread settings `nkw` applies at start, before numpy or torch load

import numpy as np  # noqa: E402

from flows.answer_questions import QueryEngine, warm_up  # noqa: E402
from flows.evaluation.question_file import load_questions  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

STAGE = REPO.parent / "shared" / "data" / "stage"
SAMPLES = REPO / "data" / "samples"


def measure(workspace: Path, questions_path: Path, system: str) -> tuple[list[float], list[float]]:
    """(wall ms, process CPU ms) per question; CPU time is what load on a shared host inflates least."""
    settings = load_settings()
    engine = QueryEngine(Workspace.at(workspace), settings)
    questions = load_questions(questions_path)
    for doc_id in {q.doc_id for q in questions}:
        warm_up(engine, doc_id)
    latencies, cpu = [], []
    for question in questions:
        started, cpu_started = time.perf_counter(), time.process_time()
        engine.ask(question.doc_id, question.question, question.options, system)
        latencies.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
    return latencies, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace")
    parser.add_argument("--questions")
    parser.add_argument("--system", default="nkw", choices=["nkw", "hybrid"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.workspace:
            workspace, questions = Path(args.workspace), Path(args.questions)
        else:
            source = STAGE if STAGE.exists() else SAMPLES
            inputs = (
                [str(source / "documents.jsonl")]
                if source == STAGE
                else [str(SAMPLES / "the_lighthouse_key.txt")]
            )
            questions = (
                source / "questions.jsonl"
                if source == STAGE
                else SAMPLES / "the_lighthouse_key.questions.jsonl"
            )
            workspace = Path(folder) / "ws"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "flows.cli.main",
                    "build",
                    *inputs,
                    "--workspace",
                    str(workspace),
                    "--quiet",
                ],
                cwd=REPO,
                check=True,
            )
        wall, cpu = measure(workspace, questions, args.system)
        latencies, cpu = np.array(wall), np.array(cpu)
    print(f"system {args.system}: {len(latencies)} questions from {questions.parent.name}/{questions.name}")
    print(
        f"latency p50 {np.percentile(latencies, 50):.1f} ms, p95 {np.percentile(latencies, 95):.1f} ms, "
        f"max {latencies.max():.1f} ms; CPU time p50 {np.percentile(cpu, 50):.1f} ms"
    )


if __name__ == "__main__":
    main()
