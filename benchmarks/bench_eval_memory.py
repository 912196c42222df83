"""Peak memory and wall time of one `nkw eval` over a built workspace.

    python benchmarks/bench_eval_memory.py --workspace W --questions Q.jsonl [--system nkw]
        [--no-prefect] [--json]

The evaluation runs as a child process (`--fresh`, so no checkpoint is reused); its peak resident
set is the kernel's figure for the child (`getrusage(RUSAGE_CHILDREN)`), so a Prefect server the
command starts for itself is not counted. A session keeps the loaded state of the documents it asked
last (`flows.answer_questions.MAX_OPEN_DOCUMENTS`): over a corpus the peak should stay flat as the
number of documents grows.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def measure(workspace: str, questions: str, system: str, prefect: bool) -> dict:
    command = [
        sys.executable,
        "-m",
        "flows.cli.main",
        "eval",
        "--workspace",
        workspace,
        "--questions",
        questions,
        "--system",
        system,
        "--json",
        "-q",
        "--fresh",
    ]
    if not prefect:
        command.append("--no-prefect")
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        sys.exit(f"error: nkw eval exited {done.returncode}: {last}")
    report = json.loads(done.stdout)
    lines = Path(questions).read_text(encoding="utf-8").splitlines()
    documents = {json.loads(line)["doc_id"] for line in lines if line.strip()}
    return {
        "run_id": report["run_id"],
        "questions": report["n_questions"],
        "documents": len(documents),
        "prefect": prefect,
        "wall_s": round(wall, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--system", default="nkw")
    parser.add_argument("--no-prefect", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.workspace, args.questions, args.system, not args.no_prefect)
    if args.json:
        print(json.dumps(result))
        return
    for key, value in result.items():
        print(f"{key:<12} {value}")


if __name__ == "__main__":
    main()
