"""Compile every grouped stage's reply schema, as sent for n items, with vLLM's xgrammar.

xgrammar is vLLM's default structured-output backend; NKW does not depend on it, so this runs in an
environment that has it (`pip install xgrammar` pulls torch). For each stage and n in 1, 2, 8 and
the stage's most items per request, the schema the client sends (fixed count, portable) must
compile; prints the compile time of each.

    python benchmarks/check_xgrammar.py
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import xgrammar  # noqa: E402

from schemas.config import Settings  # noqa: E402
from schemas.responses.batched import batch_model, fixed_count_schema  # noqa: E402
from tasks.llm.client.portable import portable_schema  # noqa: E402
from tasks.llm.requests.shapes import SHAPES  # noqa: E402


def main() -> int:
    settings = Settings()
    failed = 0
    for shape in SHAPES.values():
        schema = portable_schema(batch_model(shape.answer_model).model_json_schema())
        for n in sorted({1, 2, 8, shape.most_items(settings)}):
            started = time.perf_counter()
            try:
                xgrammar.Grammar.from_json_schema(json.dumps(fixed_count_schema(schema, n)))
                outcome = "ok"
            except Exception as exc:  # noqa: BLE001 - report every schema xgrammar refuses
                outcome, failed = f"refused: {exc}", failed + 1
            print(f"{shape.name:<26} n={n:<3} {time.perf_counter() - started:6.2f} s  {outcome}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
