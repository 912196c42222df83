"""Offline reading-skill invocation frequency per benchmark (the paper's skill-distribution table).

Reads only `<data>/<benchmark>/questions.jsonl` (qid, question, options, qtype) and runs the offline
selector on every question; prints, per benchmark, the share of questions selecting each card and
each reporting family, and the mean number of skills per question.

    python benchmarks/skill_distribution.py [DATA_DIR] [--use-qtype] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tasks.query.skills.cards import load_cards, select_skills_offline  # noqa: E402

DEFAULT_DATA = REPO.parent / "shared" / "data"
BENCHMARKS = ("stage", "fairytaleqa", "quality")


def distribution(rows: list[dict], use_qtype: bool) -> dict:
    """Shares of questions per card and per family, and mean skills per question."""
    cards = load_cards()
    per_card: Counter = Counter()
    per_family: Counter = Counter()
    total_skills = 0
    for row in rows:
        picked = select_skills_offline(
            row["question"], row.get("options") or None, qtype=row.get("qtype") if use_qtype else None
        )
        total_skills += len(picked)
        per_card.update(picked)
        per_family.update({cards[c].family for c in picked})
    n = max(1, len(rows))
    return {
        "questions": len(rows),
        "avg_skills": round(total_skills / n, 2),
        "cards": {c: round(100 * per_card[c] / n, 1) for c in cards},
        "families": {
            f: round(100 * per_family[f] / n, 1) for f in sorted({c.family for c in cards.values()})
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="?", default=str(DEFAULT_DATA))
    parser.add_argument(
        "--use-qtype", action="store_true", help="also pass each question's benchmark type as a hint"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    results = {}
    for name in BENCHMARKS:
        path = Path(args.data) / name / "questions.jsonl"
        if path.is_file():
            rows = [
                json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
            ]
            results[name] = distribution(rows, args.use_qtype)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    names = list(results)
    print(f"{'skill':<22}" + "".join(f"{n:>13}" for n in names))
    for key in ("families", "cards"):
        print(f"-- {key}")
        for item in next(iter(results.values()))[key]:
            print(f"{item:<22}" + "".join(f"{results[n][key][item]:>12.1f}%" for n in names))
    print(f"{'avg skills / question':<22}" + "".join(f"{results[n]['avg_skills']:>13.2f}" for n in names))
    print(f"{'questions':<22}" + "".join(f"{results[n]['questions']:>13}" for n in names))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
