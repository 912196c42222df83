"""Cost benchmark: every row of the cost table in one run, on one STAGE dev screenplay
(Birthday Girl by default).

1. LLM prompt tokens / source tokens per stage and in total, through the OpenAI-compatible
   test server (tokens per stage item are also projected at the offline build's item counts,
   so the figure does not depend on the fake model's reply sizes);
2. achieved / configured LLM concurrency (calls x latency / (window x in-flight limit)), for the
   document's build and (2b, as the goal states it) for the STAGE dev screenplays built at once in
   worker processes (`bench_llm.py`);
3. `--dry-run` estimate vs actual calls and prompt tokens per stage;
4. offline build wall time / embedding floor (the document's sentences embedded once with the
   same model, in the same process, model already loaded);
5. offline answer latency p50 for `--system nkw` and `hybrid`, model and bundle loaded;
6. `nkw ask` start-up (process wall time minus the answer's own latency).

    python benchmarks/bench_cost.py [--doc-title "Birthday Girl"] [--latency 0.2] [--concurrency 16]
                                    [--offline-only] [--quoting-vectors embedded] [--runner thread]
                                    [--repeat-offline N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

try:  # the process settings the CLI applies at start (absent in older trees)
    from flows.runtime import configure_process
except ImportError:  # pragma: no cover - measuring a tree from before the change
    configure_process = None
if configure_process is not None:
    configure_process()

from bench_llm import measure_concurrency, print_concurrency  # noqa: E402
from cost_llm import llm_build, print_llm  # noqa: E402
from cost_offline import ask_startup, offline_build, print_offline, query_latencies  # noqa: E402
from flows.cli.main import prefect_environment  # noqa: E402
from flows.evaluation.question_file import load_questions  # noqa: E402

STAGE = REPO.parent / "shared" / "data" / "stage"


def write_inputs(folder: Path, title: str) -> tuple[Path, str, Path]:
    """The one document (and its questions) as a benchmark documents.jsonl / questions.jsonl pair."""
    documents = [
        json.loads(line)
        for line in (STAGE / "documents.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    document = next(d for d in documents if d["title"] == title)
    doc_path, questions_path = folder / "documents.jsonl", folder / "questions.jsonl"
    doc_path.write_text(json.dumps(document, ensure_ascii=False) + "\n", encoding="utf-8")
    questions = [
        line
        for line in (STAGE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["doc_id"] == document["doc_id"]
    ]
    questions_path.write_text("\n".join(questions) + "\n", encoding="utf-8")
    return doc_path, document["doc_id"], questions_path


def print_together(run: dict | None) -> None:
    if run is not None:
        print("\n[2b] concurrency, the STAGE dev screenplays built at once (bench_llm.py):")
        print_concurrency(run)


def print_offline_repeats(runs: list[dict]) -> None:
    """Row 4 over several builds of one run: on a shared host the floor alone moves by a fifth."""
    ratios = [run["wall"] / run["floor"] for run in runs]
    walls, floors = [run["wall"] for run in runs], [run["floor"] for run in runs]
    print(
        f"\n[4] over {len(runs)} offline builds: ratio {', '.join(f'{r:.2f}' for r in ratios)}; "
        f"median {statistics.median(ratios):.2f}, at 2.0 or less in {sum(r <= 2.0 for r in ratios)} of "
        f"{len(runs)}; build {min(walls):.1f}-{max(walls):.1f} s, floor {min(floors):.1f}-{max(floors):.1f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc-title", default="Birthday Girl")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--embeddings", default=None, help="embedding backend of the offline build (e.g. hashing: fast)"
    )
    parser.add_argument(
        "--chunk-vectors",
        choices=["embedded", "sentences"],
        default=None,
        help="[embed_texts] chunk_vectors of the offline build (default: the setting's default)",
    )
    parser.add_argument(
        "--hierarchy-vectors",
        choices=["derived", "embedded"],
        default=None,
        help="[embed_assets] hierarchy_vectors of the offline build (default: the setting's default)",
    )
    parser.add_argument(
        "--quoting-vectors",
        choices=["derived", "embedded"],
        default=None,
        help="embedded: [embed_assets] grounded_vectors, [assemble_episodes] unit_vectors and "
        "[relate_episodes] episode_vectors set to embed whole texts (default: the settings' defaults)",
    )
    parser.add_argument("--llm-only", action="store_true", help="rows 1-3 only (no query or ask timings)")
    parser.add_argument(
        "--offline-only", action="store_true", help="rows 4-6 only (no test-server build; rows 1-3 skipped)"
    )
    parser.add_argument(
        "--runner", choices=["process", "thread"], default="process", help="row 2b's Prefect task runner"
    )
    parser.add_argument(
        "--repeat-offline",
        type=int,
        default=1,
        metavar="N",
        help="row 4 over N offline builds, each against its own floor (the first serves rows 5-6)",
    )
    args = parser.parse_args()
    if not (STAGE / "documents.jsonl").exists():
        sys.exit(f"the STAGE dev set is not beside the clone ({STAGE.relative_to(REPO.parent)})")
    prefect_environment()  # as the CLI sets it
    bench_started = time.perf_counter()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        doc_path, doc_id, questions_path = write_inputs(folder, args.doc_title)

        def build_offline(target: Path) -> dict:
            vectors = (args.chunk_vectors, args.hierarchy_vectors, args.quoting_vectors)
            return offline_build(doc_path, target, args.embeddings, *vectors)

        offline = build_offline(folder)
        again = [build_offline(folder / f"again{n}") for n in range(1, args.repeat_offline)]
        llm = (
            None
            if args.offline_only
            else llm_build(doc_path, folder, args.latency, args.concurrency, offline["workspace"])
        )
        # Row 2 as the goal states it: the STAGE dev screenplays built at once, worker processes.
        together = (
            None
            if args.offline_only
            else measure_concurrency(
                [str(STAGE / "documents.jsonl")],
                args.latency,
                args.concurrency,
                documents=3,
                runner=args.runner,
            )
        )
        if args.llm_only and llm is not None:
            print(f"document: {args.doc_title} ({doc_id}); offline embeddings {args.embeddings or 'default'}")
            print_llm(llm, offline, args.latency, args.concurrency)
            print_together(together)
            return
        latencies = query_latencies(offline["workspace"], questions_path, offline["settings"])
        first_question = load_questions(questions_path)[0].question
        ask_wall, ask_answer, ask_split = ask_startup(offline["workspace"], doc_id, first_question)
    threads = os.environ.get("OMP_WAIT_POLICY", "(unset)")
    print(f"document: {args.doc_title} ({doc_id}); OMP_WAIT_POLICY={threads}; cores {os.cpu_count()}")
    if llm is not None:
        print_llm(llm, offline, args.latency, args.concurrency)
        print_together(together)
    print_offline(offline, latencies, ask_wall, ask_answer, ask_split)
    if again:
        print_offline_repeats([offline, *again])
    load_after = os.getloadavg()
    print(
        f"\nbenchmark wall time {time.perf_counter() - bench_started:.0f} s; load average (1 min) "
        f"{load_before[0]:.1f} at start, {load_after[0]:.1f} at end"
    )


if __name__ == "__main__":
    main()
