"""NKW vs the hybrid baseline on the shared dev sets, offline, at an equal evidence budget.

    python benchmarks/compare_systems.py --workspace W [--questions Q.jsonl ...]

Without --questions it uses the three shared dev sets beside the clone; the workspace must
hold their documents (nkw build ../shared/data/*/documents.jsonl --workspace W).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.evaluation.compare_systems import compare, format_comparison  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

SHARED = REPO.parent / "shared" / "data"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace", required=True)
    parser.add_argument("--questions", nargs="*")
    parser.add_argument("--embeddings", choices=["minilm", "hashing"], default=None)
    args = parser.parse_args()
    questions = (
        [Path(q) for q in args.questions]
        if args.questions
        else [SHARED / name / "questions.jsonl" for name in ("stage", "fairytaleqa", "quality")]
    )
    overrides = {"embed_texts": {"backend": args.embeddings}} if args.embeddings else {}
    print(
        format_comparison(
            compare(Workspace.at(args.workspace), questions, load_settings(overrides=overrides))
        )
    )


if __name__ == "__main__":
    main()
