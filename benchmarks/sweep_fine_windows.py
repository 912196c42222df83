"""The fine-window baseline's two knobs swept on a dev set: window words × rrf_k, each read as the
evidence recall of the windows taken at the 450-word hybrid's source-token budget (any gold scene,
every gold scene), beside the 450-word hybrid itself. Retrieval only: the reader does not change
which scenes are in the evidence.

    python benchmarks/sweep_fine_windows.py --workspace W [--questions Q.jsonl]

Tune on the STAGE dev set (the default questions), never on the corpus the figures are reported on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from bench_stage_eval import gold_sections  # noqa: E402
from flows.answer_questions import QueryEngine  # noqa: E402
from flows.evaluation.scene_recall import question_scene_recall  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.query.hybrid.answer_fine import hybrid_budget  # noqa: E402
from tasks.query.hybrid.fine_windows import (  # noqa: E402
    FINE_CANDIDATES,
    FineWindows,
    build_windows,
    fine_search,
    with_vectors,
    within_budget,
)
from tasks.query.hybrid.retrieve import hybrid_search  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

SHARED = REPO.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", default=str(SHARED / "stage" / "questions.jsonl"))
    parser.add_argument("--words", default="30,40,60")
    parser.add_argument("--rrf-k", default="10,30,60")
    parser.add_argument("--candidates", type=int, default=FINE_CANDIDATES)
    args = parser.parse_args()
    workspace = Workspace.at(args.workspace)
    settings = load_settings()
    engine = QueryEngine(workspace, settings)
    gold = gold_sections(workspace, Path(args.questions))
    questions = [json.loads(line) for line in Path(args.questions).open(encoding="utf-8") if line.strip()]
    questions = [q for q in questions if q["qid"] in gold]
    vectors, budgets, hybrid = {}, {}, []
    for q in questions:
        index = engine.index(q["doc_id"])
        embedder = engine.embedder(index.embedding_model)
        vectors[q["qid"]] = embedder.embed([q["question"]])[0] if embedder is not None else None
        budgets[q["qid"]] = hybrid_budget(index, q["question"], vectors[q["qid"]], settings.retrieval)
        r = settings.retrieval
        ranked = hybrid_search(
            index, q["question"], vectors[q["qid"]], r.top_k_chunks, r.candidates, r.rrf_k,
            r.dense_chunk_score,
        )
        sections = [index.chunks.iloc[c.position]["section_id"] for c in ranked]
        hybrid.append(question_scene_recall(gold[q["qid"]], sections))
    print(f"{len(questions)} questions with mapped gold scenes")
    print(f"{'system':<24} {'any':>6} {'every':>6} {'scenes':>7}")
    print(_line("hybrid (450 words)", hybrid))
    for words in [int(w) for w in args.words.split(",")]:
        windows = {d: sweep_windows(engine, d, words, settings) for d in {q["doc_id"] for q in questions}}
        for rrf_k in [int(k) for k in args.rrf_k.split(",")]:
            found = []
            for q in questions:
                index, w = engine.index(q["doc_id"]), windows[q["doc_id"]]
                ranked = fine_search(w, index.sentence_vectors, q["question"], vectors[q["qid"]],
                                     args.candidates, rrf_k)
                taken = within_budget(ranked, w.n_tokens, budgets[q["qid"]])
                found.append(question_scene_recall(gold[q["qid"]], [w.section_ids[p] for p, _ in taken]))
            print(_line(f"fine {words} words rrf_k {rrf_k}", found))


def sweep_windows(engine: QueryEngine, doc_id: str, words: int, settings) -> FineWindows:
    """One document's windows of `words` words, scored as the settings score the baseline's (each
    window's own vector when `[retrieval] dense_window_score` is "window")."""
    index = engine.index(doc_id)
    windows = build_windows(index.sentences, index.language, words)
    if settings.retrieval.dense_window_score != "window":
        return windows
    embedder = engine.embedder(index.embedding_model)
    return with_vectors(windows, embedder.embed if embedder is not None else None)


def _line(name: str, found: list[dict]) -> str:
    n = max(1, len(found))
    return (f"{name:<24} {sum(f['any'] for f in found) / n:>6.3f} {sum(f['every'] for f in found) / n:>6.3f} "
            f"{sum(f['scenes'] for f in found) / n:>7.1f}")


if __name__ == "__main__":
    main()
