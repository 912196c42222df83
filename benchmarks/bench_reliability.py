"""Reliability benchmark: every attack family against a built workspace, and per family how many
cases were handled cleanly, printed a traceback, hung, lost data or escaped the sandbox.

    python benchmarks/bench_reliability.py [--workspace W] [--family sql] [--case NAME] [--json]

Without --workspace it builds the screenplay sample (hashing embeddings) in a temporary folder.
Families are the `*_cases.py` modules of benchmarks/reliability/: a new family is one new module
whose cases are registered with `registry.case(family)` (see benchmarks/reliability/registry.py).
The goal is 0 in every column but the first two.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks import reliability  # noqa: E402
from benchmarks.reliability.registry import COLUMNS, FAMILIES, Context, run_family, scratch_dir  # noqa: E402


def load_families() -> None:
    for module in pkgutil.iter_modules(reliability.__path__):
        if module.name.endswith("_cases"):
            importlib.import_module(f"benchmarks.reliability.{module.name}")


def environment(scratch: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PREFECT_API_URL",)}
    env.update(
        PYTHONPATH=str(REPO),
        NKW_API_KEY="",
        OPENAI_API_KEY="",
        DO_NOT_TRACK="1",
        PREFECT_HOME=str(scratch / "prefect"),
        PREFECT_LOGGING_LEVEL="WARNING",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_UI_ENABLED="false",
        # The Prefect cases start (and kill) a temporary server: never a server running on the host.
        NKW_PREFECT_LOCAL_URL="",
    )
    return env


def build_sample(scratch: Path, env: dict[str, str]) -> Path:
    workspace = scratch / "built"
    sample = REPO / "data" / "samples" / "the_lighthouse_key.txt"
    args = ["build", str(sample), "-w", str(workspace), "--embeddings", "hashing", "--no-prefect", "-q"]
    subprocess.run([sys.executable, "-m", "flows.cli.main", *args], cwd=REPO, env=env, check=True)
    return workspace


def tally(results) -> dict[str, int]:
    return {
        "cases": len(results),
        "handled": sum(o.handled for _, o, _ in results),
        "tracebacks": sum(o.traceback for _, o, _ in results),
        "hangs": sum(o.hang for _, o, _ in results),
        "data loss": sum(o.data_loss for _, o, _ in results),
        "escapes": sum(o.escape for _, o, _ in results),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", help="a built workspace (copied, never changed)")
    parser.add_argument("--family", action="append", help="only these families (repeat)")
    parser.add_argument("--case", help="only cases whose name contains this")
    parser.add_argument("--json", action="store_true", help="every case's outcome as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # each family's lines as it ends, also into a file
    load_families()
    scratch = scratch_dir()
    env = environment(scratch)
    try:
        if args.workspace:
            workspace = scratch / "built"
            shutil.copytree(args.workspace, workspace, symlinks=True)
        else:
            workspace = build_sample(scratch, env)
        ctx = Context(workspace=workspace, scratch=scratch, env=env)
        families = args.family or sorted(FAMILIES)
        unknown = set(families) - set(FAMILIES)
        if unknown:
            parser.error(f"unknown families {sorted(unknown)}; known: {sorted(FAMILIES)}")
        report: dict[str, dict] = {}
        started = time.monotonic()
        for family in families:
            results = [r for r in run_family(family, ctx, args.case) if r[1] is not None]
            report[family] = {"totals": tally(results), "cases": results}
            for name, outcome, seconds in results:
                flags = [c for c in ("traceback", "hang", "data_loss", "escape") if getattr(outcome, c)]
                mark = "ok  " if outcome.handled else "FAIL"
                print(
                    f"  {mark} {family:<12} {name:<48} {seconds:6.1f}s  {' '.join(flags)} {outcome.note}"[
                        :220
                    ]
                )
        print()
        print(f"{'family':<14}" + "".join(f"{c:>12}" for c in COLUMNS))
        for family, data in report.items():
            print(f"{family:<14}" + "".join(f"{data['totals'][c]:>12}" for c in COLUMNS))
        totals = {c: sum(d["totals"][c] for d in report.values()) for c in COLUMNS}
        print(f"{'all':<14}" + "".join(f"{totals[c]:>12}" for c in COLUMNS))
        print(f"({time.monotonic() - started:.0f} s)")
        if args.json:
            print(
                json.dumps(
                    {
                        f: {
                            "totals": d["totals"],
                            "cases": [
                                {"case": n, **vars(o), "seconds": round(s, 1)} for n, o, s in d["cases"]
                            ],
                        }
                        for f, d in report.items()
                    },
                    indent=1,
                )
            )
        bad = totals["tracebacks"] + totals["hangs"] + totals["data loss"] + totals["escapes"]
        return 1 if bad else 0
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
