"""Evaluation at corpus size: every question of a questions file through `nkw eval` (Prefect) for the
two hybrid baselines (450-word chunks; ~40-word windows) and for NKW at the same evidence budget,
then evidence recall read three ways (any gold scene, every gold scene, NKW at each baseline's number
of distinct scenes), overall, per language and per question type, with p50/p95 latency.

    python benchmarks/bench_stage_eval.py --workspace W [--questions Q.jsonl] [--limit N]

The workspace must hold the questions' documents (e.g. `nkw build ../shared/data/stage-corpus/
documents.jsonl --workspace W`). Offline unless the config names an LLM: the figures are those of
the extractive reader and the retrieval, labelled offline.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.evaluation.scene_recall import scene_recall_rows, summarize_scene_recall  # noqa: E402
from tasks.evaluate.gold_mapping import SectionLookup, map_gold  # noqa: E402
from tasks.evaluate.metrics import Question  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402

SHARED = REPO.parent / "shared" / "data"


def run_eval(workspace: str, questions: str, system: str, extra: list[str]) -> tuple[dict, float]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", "eval", "--workspace", workspace, "--questions", questions,
         "--system", system, "--json", *extra],
        cwd=REPO, capture_output=True, text=True,
    )
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1) or not done.stdout.strip().startswith("{"):
        sys.exit(f"nkw eval --system {system} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    return json.loads(done.stdout), seconds


def gold_sections(workspace: Workspace, questions_path: Path) -> dict[str, list[str]]:
    """Each question's gold section ids, mapped as `nkw eval` maps them."""
    questions = [Question.from_json(json.loads(line)) for line in questions_path.open(encoding="utf-8")
                 if line.strip()]
    lookups: dict[str, SectionLookup | None] = {}
    gold = {}
    for question in questions:
        if question.doc_id not in lookups:
            sections = read_frame(workspace, "sections", part=question.doc_id)
            lookups[question.doc_id] = SectionLookup(sections) if len(sections) else None
        lookup = lookups[question.doc_id]
        if lookup is not None:
            mapping = map_gold(question.meta, lookup)
            if mapping.section_ids and not mapping.unmapped:
                gold[question.qid] = mapping.section_ids
    return gold


# The three systems side by side first; fractions and latencies after, so a line fits a terminal.
RECALL_COLUMNS = (
    "group", "n", "hybrid_any", "hybrid_fine_any", "nkw_any", "hybrid_every", "hybrid_fine_every",
    "nkw_every", "nkw_equal_every", "nkw_equal_fine_every", "hybrid_scenes", "hybrid_fine_scenes",
    "nkw_scenes",
)


def print_table(title: str, frame) -> None:
    print(f"\n{title}")
    first = [c for c in RECALL_COLUMNS if c in frame.columns]
    print(frame[first].to_string(index=False))
    print(frame[["group"] + [c for c in frame.columns if c not in first]].to_string(index=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(SHARED / "stage-corpus" / "questions.jsonl"))
    parser.add_argument("--limit", type=int)
    parser.add_argument("--fresh", action="store_true", help="answer again (ignore stored runs)")
    parser.add_argument("--no-prefect", action="store_true", help="answer in-process, without Prefect")
    args = parser.parse_args()
    extra = (
        (["--limit", str(args.limit)] if args.limit else [])
        + (["--fresh"] if args.fresh else [])
        + (["--no-prefect"] if args.no_prefect else [])
    )
    reports, seconds = {}, {}
    for system in ("hybrid", "hybrid_fine", "nkw"):
        reports[system], seconds[system] = run_eval(args.workspace, args.questions, system, extra)
        report = reports[system]
        print(f"nkw eval --system {system}: {report['n_questions']} answered in {seconds[system]:.0f} s "
              f"(run {report['run_id']}, offline={report['offline']})", flush=True)
    workspace = Workspace.at(args.workspace)
    answers = read_frame(workspace, "qa_answers")
    runs = {s: answers[answers["run_id"] == r["run_id"]] for s, r in reports.items()}
    gold = gold_sections(workspace, Path(args.questions))
    rows = scene_recall_rows(runs["nkw"], runs["hybrid"], gold, hybrid_fine=runs["hybrid_fine"])
    print(f"\nquestions with mapped gold scenes, answered by both: {len(rows)}")
    print_table("overall", summarize_scene_recall(rows))
    print_table("per language", summarize_scene_recall(rows, "language"))
    print_table("per question type", summarize_scene_recall(rows, "qtype"))
    print("\nany/every: share of questions with at least one / all gold scenes in the final evidence; "
          "fraction: mean share of gold scenes found; nkw_equal_*: NKW cut to the 450-word baseline's number "
          "of distinct scenes on each question, nkw_equal_fine_*: to the fine-window baseline's; scenes: "
          "mean distinct scenes in the final evidence")


if __name__ == "__main__":
    main()
