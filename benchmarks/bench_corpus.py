"""Corpus benchmark: ~30 documents (>= 3 MB) made from the shared STAGE screenplays, repeated
under new doc ids, built through Prefect with every stage.

Prints seconds per document for the first and last ten documents (flat means the build does
not slow down as the corpus grows), the peak RSS of the build process, Prefect's own overhead
per document (document wall time minus the time spent inside its stages, and the flow's fixed
start-up cost), and the projected time for the 151 screenplays of the full STAGE release.

    python benchmarks/bench_corpus.py [--documents 30] [--embeddings hashing] [--concurrency 2]
                                      [--runner thread|process]

With `--runner process` the peak RSS of the largest worker process is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.cli.main import prefect_environment  # noqa: E402
from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from schemas.config import load_settings  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

SHARED = Path(os.environ.get("NKW_SHARED_DATA", REPO.parent / "shared" / "data"))
FULL_RELEASE = 151


def write_corpus(source: Path, target: Path, documents: int) -> tuple[int, int]:
    """`documents` records cycling through the STAGE screenplays (English and Chinese) under new ids."""
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    size = 0
    with target.open("w", encoding="utf-8") as out:
        for n in range(documents):
            record = records[n % len(records)]
            line = (
                json.dumps({**record, "doc_id": f"{record['doc_id'][:24]}-r{n:03d}"}, ensure_ascii=False)
                + "\n"
            )
            out.write(line)
            size += len(line.encode("utf-8"))
    return size, sum(len(r["text"]) for r in records) // len(records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=30)
    parser.add_argument("--embeddings", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--stage-file", default=str(SHARED / "stage" / "documents.jsonl"))
    parser.add_argument("--runner", choices=["thread", "process"], default="thread")
    args = parser.parse_args()
    prefect_environment()
    settings = load_settings(
        overrides={"embed_texts": {"backend": args.embeddings}, "build": {"concurrency": args.concurrency}}
    )
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "documents.jsonl"
        size, mean_chars = write_corpus(Path(args.stage_file), corpus, args.documents)
        started = time.perf_counter()
        report = build(
            [str(corpus)], Workspace.at(Path(folder) / "ws"), settings, quiet=True, runner=args.runner
        )
        wall = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    # Of the children that ended: the worker processes (and the Prefect server)
    child_peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    docs = report.documents  # input order, which is also the order they were submitted in
    per_doc = [d.seconds for d in docs]
    stage_seconds = [sum(o.seconds for o in d.outcomes) for d in docs]
    in_task = [max(0.0, total - inside) for total, inside in zip(per_doc, stage_seconds)]
    flow_wall = wall - report.plan_seconds
    # What the documents' own wall time cannot explain at this concurrency: server start, flow and
    # task scheduling, result collection.
    fixed = max(0.0, flow_wall - sum(per_doc) / args.concurrency)
    overhead_per_doc = statistics.mean(in_task) + fixed * args.concurrency / len(docs)
    first, last = statistics.mean(per_doc[:10]), statistics.mean(per_doc[-10:])
    projected = flow_wall / len(docs) * FULL_RELEASE
    figures = {
        "documents": len(docs),
        "input_mb": round(size / 1e6, 2),
        "embeddings": args.embeddings,
        "concurrency": args.concurrency,
        "runner": args.runner,
        "ok": report.ok,
        "stage_runs": report.count("built"),
        "failed": report.count("failed"),
        "wall_s": round(wall, 1),
        "plan_s": round(report.plan_seconds, 2),
        "s_per_doc_first10": round(first, 1),
        "s_per_doc_last10": round(last, 1),
        "last10_vs_first10": f"{(last / first - 1) * 100:+.1f}%",
        "peak_rss_mb": round(peak_mb),
        "peak_rss_largest_child_mb": round(child_peak_mb),
        "prefect_overhead_s_per_doc": round(overhead_per_doc, 2),
        "prefect_overhead_pct_of_stage_time": round(
            100 * overhead_per_doc / statistics.mean(stage_seconds), 2
        ),
        "prefect_in_task_s_per_doc": round(statistics.mean(in_task), 3),
        "prefect_fixed_s": round(fixed, 1),
        "projected_151_screenplays_h": round(projected / 3600, 2),
        "mean_chars_per_screenplay": mean_chars,
    }
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
