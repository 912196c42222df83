"""Short typed answers against whole-sentence answers, offline, on a free-text questions file:
ROUGE-L F1 and exact match against the reference answers, per question type, with the evidence
recall of the same answers (the evidence is the same for both: only the final answer differs).

    python benchmarks/bench_short_answers.py --workspace W --questions Q.jsonl [--every N]

"sentence" is the best-ranked evidence sentence (what the offline answer was before short
answers); "short" is the answer `nkw ask` gives now (a typed phrase, or the sentence as fallback).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.answer_questions import QueryEngine  # noqa: E402
from flows.evaluation.question_file import load_questions  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.evaluate.metrics import best_rouge, evidence_recall, gold_section_ids, rouge_tokens  # noqa: E402
from tasks.query import finalize_offline  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402


def exact(answer: str, references: list[str]) -> float:
    tokens = rouge_tokens(answer)
    return float(any(tokens == rouge_tokens(r) for r in references if r))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--every", type=int, default=1, help="every Nth free-text question (a spread subset)")
    args = parser.parse_args()
    engine = QueryEngine(Workspace.at(args.workspace), load_settings())
    questions = [q for q in load_questions(Path(args.questions)) if not q.options][:: max(1, args.every)]
    best_sentence: list[str] = []
    ranker = finalize_offline.rank_sentences

    def recording(env, question, intents, board):  # the sentence the answer was before short answers
        ranked = ranker(env, question, intents, board)
        best_sentence.append(str(env.store.source.sentences.iloc[ranked[0][0]]["text"]) if ranked else "")
        return ranked

    finalize_offline.rank_sentences = recording
    rows = []
    for question in questions:
        answer = engine.ask(question.doc_id, question.question)
        gold = gold_section_ids(question, engine.index(question.doc_id).sections)
        sentence = best_sentence[-1]
        rows.append(
            {
                "qtype": question.qtype or "(none)",
                "kind": answer.answer_kind,
                "rouge_sentence": best_rouge(sentence, question.references) or 0.0,
                "rouge_short": best_rouge(answer.answer, question.references) or 0.0,
                "exact_sentence": exact(sentence, question.references),
                "exact_short": exact(answer.answer, question.references),
                "recall": evidence_recall(gold, answer.evidence_section_ids),
            }
        )
    finalize_offline.rank_sentences = ranker
    groups = defaultdict(list)
    for row in rows:
        groups["ALL"].append(row)
        groups[row["qtype"]].append(row)
    print(
        f"{len(rows)} free-text questions from {Path(args.questions).parent.name} "
        f"(every {args.every}); offline"
    )
    print(
        f"{'qtype':<22} {'n':>4} {'ROUGE-L sent':>13} {'ROUGE-L short':>14} "
        f"{'EM sent':>8} {'EM short':>9} {'recall':>7}"
    )
    for name, group in sorted(groups.items(), key=lambda item: (item[0] != "ALL", item[0])):
        mean = lambda key: np.mean([r[key] for r in group if r[key] is not None] or [np.nan])  # noqa: E731
        print(
            f"{name[:22]:<22} {len(group):>4} {mean('rouge_sentence'):>13.3f} {mean('rouge_short'):>14.3f} "
            f"{mean('exact_sentence'):>8.3f} {mean('exact_short'):>9.3f} {mean('recall'):>7.3f}"
        )
    kinds = defaultdict(int)
    for row in rows:
        kinds[row["kind"] or "?"] += 1
    print("answer kinds: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))


if __name__ == "__main__":
    main()
