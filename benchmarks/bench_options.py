"""Multiple-choice accuracy offline with a 95% Wilson interval, per question, on a questions file
with options (e.g. the shared QuALITY dev set), through the same path as `nkw ask`.

    python benchmarks/bench_options.py --workspace W --questions Q.jsonl
        [--system nkw|hybrid] [--per-question]
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.answer_questions import QueryEngine  # noqa: E402
from flows.evaluation.question_file import load_questions  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402


def wilson(correct: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = correct / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", required=True)
    parser.add_argument("--system", default="nkw", choices=["nkw", "hybrid"])
    parser.add_argument(
        "--per-question", action="store_true", help="one line per question with the chosen option"
    )
    args = parser.parse_args()
    engine = QueryEngine(Workspace.at(args.workspace), load_settings())
    questions = [q for q in load_questions(Path(args.questions)) if q.options and q.gold_option is not None]
    correct, chosen = 0, Counter()
    for question in questions:
        answer = engine.ask(question.doc_id, question.question, question.options, args.system)
        right = answer.chosen_option == question.gold_option
        correct += right
        chosen[answer.chosen_option] += 1
        if args.per_question:
            print(
                f"{question.qid}\tgold {chr(65 + question.gold_option)}"
                f"\tchose {chr(65 + answer.chosen_option)}"
                f"\t{'right' if right else 'wrong'}\t{answer.notes[1] if len(answer.notes) > 1 else ''}",
                flush=True,
            )
    low, high = wilson(correct, len(questions))
    print(
        f"{args.system}: {correct}/{len(questions)} = {correct / max(1, len(questions)):.3f} "
        f"(95% Wilson interval {low:.3f}-{high:.3f}; chance 1/options); chosen positions "
        + ", ".join(f"{chr(65 + k)} {v}" for k, v in sorted(chosen.items()))
    )


if __name__ == "__main__":
    main()
