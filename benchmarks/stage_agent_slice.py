"""A small slice of STAGE corpus questions for the LLM agent on a real local model: the first
narrative-progression question of 10 screenplays and the first temporal question of 10 others,
the screenplays drawn with fixed seeds, so the slice is the same on every machine.

    python benchmarks/stage_agent_slice.py --out slice.jsonl [--take 3]
    nkw eval --workspace W --questions slice.jsonl --system nkw --local-llm 0.5b \
        --config benchmarks/real_llm_slice.toml --no-prefect

W is an offline build of the corpus (`nkw build ../shared/data/stage-corpus/documents.jsonl`); the
model answers over it (building 131 screenplays through a 0.5B model on a CPU would take days).
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
TYPES = (("Narrative Progression", 1), ("Temporal Reasoning", 2))  # question type, seed of its draw


def first_of_each_document(questions: list[dict], qtype: str) -> dict[str, dict]:
    """Each screenplay's first question of `qtype`, in file order."""
    found: dict[str, dict] = {}
    for question in questions:
        if question["qtype"] == qtype:
            found.setdefault(question["doc_id"], question)
    return found


def agent_slice(questions: list[dict], per_type: int, take: int | None = None) -> list[dict]:
    """`per_type` questions of each type from distinct screenplays; with `take`, only the first
    `take` of each type (a shorter run for a slower model, the same draw)."""
    chosen: list[dict] = []
    used: set[str] = set()
    for qtype, seed in TYPES:
        by_document = first_of_each_document(questions, qtype)
        documents = sorted(d for d in by_document if d not in used)
        random.Random(seed).shuffle(documents)
        for rank, doc_id in enumerate(documents[:per_type]):
            if take is None or rank < take:
                chosen.append(by_document[doc_id])
            used.add(doc_id)
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", default=str(SHARED / "stage-corpus" / "questions.jsonl"))
    parser.add_argument("--per-type", type=int, default=10)
    parser.add_argument("--take", type=int, help="only the first N of each type (same draw)")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    with open(args.questions, encoding="utf-8") as lines:
        questions = [json.loads(line) for line in lines if line.strip()]
    chosen = agent_slice(questions, args.per_type, args.take)
    with open(args.out, "w", encoding="utf-8") as out:
        out.writelines(json.dumps(q, ensure_ascii=False) + "\n" for q in chosen)
    print(f"{len(chosen)} questions from {len({q['doc_id'] for q in chosen})} screenplays -> {args.out}")


if __name__ == "__main__":
    main()
