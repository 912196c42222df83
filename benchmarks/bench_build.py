"""Build benchmark: build seconds per 10k words, peak memory, and no-op rebuild seconds.

Runs `nkw build` as a subprocess (the real command, with Prefect and the default MiniLM
embeddings) on the shared STAGE dev set when it is beside the clone, else on the samples.

    python benchmarks/bench_build.py [PATH ...] [--embeddings hashing]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_INPUTS = [REPO.parent / "shared" / "data" / "stage" / "documents.jsonl"]
FALLBACK_INPUTS = [REPO / "data" / "samples" / "the_lighthouse_key.txt", REPO / "data" / "samples" / "the_fisherman_and_his_wife.txt"]


def run_build(paths: list[str], workspace: Path, extra: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    process = subprocess.run([sys.executable, "-m", "flows.cli", "build", *paths, "--workspace", str(workspace), "--json", *extra],
                             cwd=REPO, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        sys.exit(f"build failed: {process.stderr[-1000:]}")
    return json.loads(process.stdout), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--embeddings", choices=["minilm", "hashing"], default=None)
    args = parser.parse_args()
    inputs = args.paths or [str(p) for p in (DEFAULT_INPUTS if DEFAULT_INPUTS[0].exists() else FALLBACK_INPUTS)]
    extra = ["--embeddings", args.embeddings] if args.embeddings else []
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "ws"
        first, first_seconds = run_build(inputs, workspace, extra)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        second, second_seconds = run_build(inputs, workspace, extra)
        words = subprocess.run([sys.executable, "-m", "flows.cli", "sql", "--workspace", str(workspace), "--format", "json",
                                "SELECT sum(n_words) AS words, count(*) AS docs FROM documents"],
                               cwd=REPO, capture_output=True, text=True)
        totals = json.loads(words.stdout)[0]
    print(f"inputs: {', '.join(Path(p).name for p in inputs)} ({totals['docs']} documents, {totals['words']:,} words)")
    print(f"first build:        {first_seconds:8.1f} s  ({first['built']} stage runs, Prefect={first['used_prefect']})")
    print(f"per 10k words:      {first_seconds / totals['words'] * 10_000:8.1f} s")
    print(f"peak memory:        {peak_mb:8.0f} MB (largest build process)")
    print(f"no-op rebuild:      {second_seconds:8.2f} s  ({second['skipped']} stages skipped, "
          f"{100 * second_seconds / first_seconds:.1f}% of the first build)")


if __name__ == "__main__":
    main()
