"""Build benchmark: build seconds per 10k words, peak memory, no-op rebuild seconds, the
asset figures per document, and hierarchy-stage seconds and episode-pair candidates per
document.

Runs `nkw build` as a subprocess (the real command, with Prefect and the default MiniLM
embeddings) on the shared STAGE dev set when it is beside the clone, else on the samples.

    python benchmarks/bench_build.py [PATH ...] [--embeddings hashing] [--runner thread|process]
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
sys.path.insert(0, str(REPO))

from tasks.tables.manifest import list_manifests  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402
from tasks.tables.warehouse import connect, load_sql  # noqa: E402

HIERARCHY = ("assemble_episodes", "relate_episodes", "break_cycles", "induce_storylines")
DEFAULT_INPUTS = [REPO.parent / "shared" / "data" / "stage" / "documents.jsonl"]
FALLBACK_INPUTS = [
    REPO / "data" / "samples" / "the_lighthouse_key.txt",
    REPO / "data" / "samples" / "the_fisherman_and_his_wife.txt",
]


def run_build(paths: list[str], workspace: Path, extra: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    process = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", "build", *paths, "--workspace", str(workspace), "--json",
         *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        sys.exit(f"build failed: {process.stderr[-1000:]}")
    return json.loads(process.stdout), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--embeddings", choices=["minilm", "hashing"], default=None)
    parser.add_argument("--runner", choices=["thread", "process"], default=None, help="`nkw build --runner`")
    args = parser.parse_args()
    inputs = args.paths or [
        str(p) for p in (DEFAULT_INPUTS if DEFAULT_INPUTS[0].exists() else FALLBACK_INPUTS)
    ]
    extra = (["--embeddings", args.embeddings] if args.embeddings else []) + (
        ["--runner", args.runner] if args.runner else []
    )
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder) / "ws"
        first, first_seconds = run_build(inputs, workspace, extra)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        second, second_seconds = run_build(inputs, workspace, extra)
        con = connect(Workspace.at(workspace))
        words, docs = con.execute("SELECT sum(n_words), count(*) FROM documents").fetchall()[0]
        totals = {"words": int(words), "docs": int(docs)}
        cursor = con.execute(load_sql("asset_statistics"))
        columns = [d[0] for d in cursor.description]
        assets = [dict(zip(columns, row)) for row in cursor.fetchall()]
        manifests = list_manifests(Workspace.at(workspace))
    print(
        f"inputs: {', '.join(Path(p).name for p in inputs)} "
        f"({totals['docs']} documents, {totals['words']:,} words)"
    )
    print(
        f"first build:        {first_seconds:8.1f} s  "
        f"({first['built']} stage runs, Prefect={first['used_prefect']})"
    )
    print(f"per 10k words:      {first_seconds / totals['words'] * 10_000:8.1f} s")
    print(f"peak memory:        {peak_mb:8.0f} MB (largest process: the build or one of its workers)")
    print(
        f"no-op rebuild:      {second_seconds:8.2f} s  ({second['skipped']} stages skipped, "
        f"{100 * second_seconds / first_seconds:.1f}% of the first build)"
    )
    print("assets per document:")
    print("  " + " ".join(f"{c[:14]:>14}" for c in columns))
    for row in assets:
        print("  " + " ".join(f"{str(row[c])[:14]:>14}" for c in columns))
    print(
        "hierarchy per document: stage seconds (assemble / relate / break / induce), "
        "episodes, candidate pairs"
    )
    for manifest in manifests:
        seconds = " / ".join(
            f"{manifest.stages[s].seconds:.2f}" if s in manifest.stages else "-" for s in HIERARCHY
        )
        details = manifest.stages["relate_episodes"].details if "relate_episodes" in manifest.stages else {}
        print(
            f"  {manifest.doc_id[:24]:<24} {seconds}  episodes {details.get('episodes', '-')}, "
            f"candidate pairs {details.get('candidate_pairs', '-')}"
        )


if __name__ == "__main__":
    main()
