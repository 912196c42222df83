"""Where NKW's narrative-progression evidence misses a gold scene, and what could still reach it.

    python benchmarks/bench_progression_misses.py --workspace W --run RUN_ID --questions Q.jsonl
        [--corpus DIR] [--json]

`RUN_ID` is an offline `nkw eval --system nkw` run over `Q.jsonl` in workspace `W` (a build of the
STAGE corpus); only its "Narrative Progression" questions are read. Three measures, each for the
missed gold scenes of those questions:

- **support**: each missed question is answered again with the run's settings, and its final board's
  ranked support (every chunk some tool or walk put forward, before the budget fill) is recorded: a
  missed scene that is absent from it can be reached by no change of budget or passage order;
- **clause ranks**: the missed scene's best rank over the question's clauses (`read_shape`), by the
  clause's passage score (BM25 + best sentence, as the walks score) and by a scene gist (the mean of
  the scene's sentence vectors);
- **the DAG with perfect anchors**: the answer episode is mapped through the release's episodes (the
  gold answer is a release episode name); with our episodes that hold the other gold scenes as
  anchors, is an episode holding the answer's scene 1, 2 or 3 relations back in our cleaned DAG, and
  among how many predecessors.

The reference is read here, for measuring only; no stage of the product reads it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import networkx as nx
import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import tasks.query.answer_nkw as answer_module  # noqa: E402
from benchmarks.bench_episode_agreement import SHARED, read_gzip_lines, reference_spans  # noqa: E402
from benchmarks.bench_stage_eval import gold_sections  # noqa: E402
from flows.answer_questions import QueryEngine  # noqa: E402
from schemas.config import Settings  # noqa: E402
from tasks.evaluate.gold_mapping import SectionLookup  # noqa: E402
from tasks.query.question_clauses import read_shape  # noqa: E402
from tasks.query.tools.episode_walk import passage_scores  # noqa: E402
from tasks.tables.io import Workspace, as_list, read_frame  # noqa: E402

PROGRESSION = "Narrative Progression"
RANK_BUCKETS = ((5, "1-5"), (10, "6-10"), (30, "11-30"))


def rank_bucket(rank: int | None) -> str:
    for limit, name in RANK_BUCKETS:
        if rank is not None and rank < limit:
            return name
    return "31 or lower"


class SupportRecorder:
    """Wraps the final passage selection to keep the sections of the board's ranked support."""

    def __init__(self) -> None:
        self.original = answer_module.select_passages
        self.sections: list[str] = []

    def __call__(self, store, support, *args, **kwargs):
        ranked = sorted(support.items(), key=lambda item: (-item[1][0], store.chunk_position.get(item[0], 0)))
        self.sections = list(
            dict.fromkeys(store.chunks_by_id[c]["section_id"] for c, _ in ranked if c in store.chunks_by_id)
        )
        return self.original(store, support, *args, **kwargs)


def scene_gists(store) -> tuple[list[str], np.ndarray]:
    """Each scene's mean sentence vector, normalised (scenes in story order)."""
    source = store.source
    positions: dict[str, list[int]] = defaultdict(list)
    section_of_chunk = {c: s for s, chunks in source.chunk_ids_of_section.items() for c in chunks}
    for index, row in enumerate(source.sentence_rows):
        section = section_of_chunk.get(row["chunk_id"])
        if section:
            positions[section].append(index)
    ids = list(positions)
    if not ids or source.sentence_vectors.shape[0] == 0:
        return [], np.zeros((0, 1))
    gists = np.stack([source.sentence_vectors[positions[s]].mean(0) for s in ids])
    gists /= np.linalg.norm(gists, axis=1, keepdims=True) + 1e-9
    return ids, gists


def clause_ranks(env, store, question: str, missed: set[str], gists) -> dict[str, dict[str, int]]:
    """Each missed scene's best rank over the question's clauses, by passage score and by gist."""
    ids, matrix = gists
    best: dict[str, dict[str, int]] = {m: {} for m in missed}
    for clause in list(read_shape(question).clauses or (question,))[:4]:
        vector = env.vector(clause)
        scene_scores: dict[str, float] = {}
        for chunk_id, score in passage_scores(env, clause, vector).items():
            section = store.chunks_by_id[chunk_id]["section_id"]
            scene_scores[section] = max(scene_scores.get(section, 0.0), score)
        rankings = {"passage": sorted(scene_scores, key=lambda s: -scene_scores[s])}
        if vector is not None and len(ids) and matrix.shape[1] == vector.reshape(-1).shape[0]:
            rankings["gist"] = [ids[i] for i in np.argsort(-(matrix @ vector.reshape(-1)))]
        for name, order in rankings.items():
            where = {s: i for i, s in enumerate(order)}
            for scene in missed:
                if scene in where:
                    best[scene][name] = min(best[scene].get(name, where[scene]), where[scene])
    return best


def dag_reach(store, answer_scenes: set[str], described: set[str]) -> dict[str, int] | None:
    """With our episodes holding `described` as anchors: is an episode holding an answer scene
    1, 2 or 3 relations back, and how many episodes lie one relation back."""
    episodes_of: dict[str, set[str]] = defaultdict(set)
    for episode_id, episode in store.episodes_by_id.items():
        for section in as_list(episode["section_ids"]):
            episodes_of[section].add(episode_id)
    answers = set().union(*(episodes_of[s] for s in answer_scenes))
    anchors = {e for s in described for e in episodes_of[s] if e in store.episode_dag}
    if not answers or not anchors:
        return None
    back = store.episode_dag.reverse(copy=False)
    hops: dict[str, int] = {}
    for anchor in anchors:
        for episode, distance in nx.single_source_shortest_path_length(back, anchor, cutoff=3).items():
            if episode not in anchors and distance > 0:
                hops[episode] = min(hops.get(episode, distance), distance)
    reached = [hops[e] for e in answers if e in hops]
    return {
        "hop 1": int(bool(reached) and min(reached) <= 1),
        "hop 2": int(bool(reached) and min(reached) <= 2),
        "hop 3": int(bool(reached)),
        "predecessors": sum(1 for d in hops.values() if d == 1),
    }


def measure(workspace: Workspace, run_id: str, questions_path: Path, corpus: Path) -> dict:
    answers = read_frame(workspace, "qa_answers")
    answers = answers[(answers["run_id"] == run_id) & (answers["sample"] == 0)]
    answers = answers[answers["qtype"] == PROGRESSION]
    if answers.empty:
        sys.exit(f"error: run {run_id} has no narrative-progression answer in this workspace")
    questions = {
        q["qid"]: q
        for q in (json.loads(line) for line in questions_path.open(encoding="utf-8") if line.strip())
    }
    gold = gold_sections(workspace, questions_path)
    reference: dict[str, list[dict]] = defaultdict(list)
    for row in read_gzip_lines(corpus / "reference_episodes.jsonl.gz"):
        reference[row["doc_id"]].append(row)
    engine = QueryEngine(workspace, Settings())
    recorder = SupportRecorder()
    answer_module.select_passages = recorder
    figures: Counter = Counter()
    predecessors: list[int] = []
    gists: dict[str, tuple] = {}
    try:
        for row in answers.to_dict("records"):
            qid = row["qid"]
            if qid not in gold or qid not in questions:
                continue
            question = questions[qid]
            doc_id = question["doc_id"]
            store = engine.store(doc_id)
            figures["questions"] += 1
            evidence = set(as_list(row["evidence_section_ids"]))
            missed = set(gold[qid]) - evidence
            lookup = SectionLookup(read_frame(workspace, "sections", part=doc_id))
            spans = reference_spans(reference[doc_id], lookup)
            named = str(question.get("answer", "")).strip().lower()
            answer_scenes = set(gold[qid]) & set().union(
                *(s.section_ids for s in spans if s.name.strip().lower() == named)
            )
            reach = dag_reach(store, answer_scenes, set(gold[qid]) - answer_scenes)
            if reach is not None:
                figures["questions with an answer episode and described scenes"] += 1
                figures["answer scene in evidence"] += bool(answer_scenes & evidence)
                for key in ("hop 1", "hop 2", "hop 3"):
                    figures[f"answer episode {key} back from perfect anchors"] += reach[key]
                predecessors.append(reach["predecessors"])
            if not missed:
                continue
            figures["questions missing a scene"] += 1
            figures["missed scenes"] += len(missed)
            figures["missed scenes of the answer episode"] += len(missed & answer_scenes)
            engine.ask(doc_id, question["question"])
            figures["missed scenes absent from the support"] += len(missed - set(recorder.sections))
            if doc_id not in gists:
                gists[doc_id] = scene_gists(store)
            embedder = engine.embedder(engine.index(doc_id).embedding_model)
            env = engine.tool_env(doc_id, embedder.embed if embedder else None)
            for scene, ranks in clause_ranks(env, store, question["question"], missed, gists[doc_id]).items():
                buckets = {name: rank_bucket(ranks.get(name)) for name in ("passage", "gist")}
                for name, bucket in buckets.items():
                    figures[f"missed scenes, {name} rank {bucket}"] += 1
                figures["missed scenes ranked 31 or lower by both"] += len(set(buckets.values())) == 1 and (
                    buckets["passage"] == rank_bucket(None)
                )
    finally:
        answer_module.select_passages = recorder.original
    result = dict(sorted(figures.items()))
    mean = round(float(np.mean(predecessors)), 2) if predecessors else 0.0
    result["predecessors one relation back (mean)"] = mean
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--run", required=True, help="an offline nkw eval run over --questions")
    parser.add_argument("--questions", required=True, help="the questions file the run answered")
    parser.add_argument("--corpus", default=str(SHARED), help="folder holding the reference files")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(Workspace.at(args.workspace), args.run, Path(args.questions), Path(args.corpus))
    if args.json:
        print(json.dumps(result))
        return
    width = max(len(k) for k in result)
    for key, value in result.items():
        print(f"{key:<{width}}  {value}")


if __name__ == "__main__":
    main()
