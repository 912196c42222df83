"""How long `nkw` takes to answer without running a command: `--help`, a command's `--help` and a
usage error (a misspelt flag), each in a fresh process, as min / median / max seconds.

    python benchmarks/bench_cli_help.py [--repeat N]

Also prints the interpreter's own start-up (`python -c pass`) for scale: what is left above it is
the CLI's imports and parser.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "flows.cli.main"]
CASES = {
    "python -c pass (interpreter only)": [sys.executable, "-c", "pass"],
    "nkw --help": [*CLI, "--help"],
    "nkw ask --help": [*CLI, "ask", "--help"],
    "nkw sql --help": [*CLI, "sql", "--help"],
    "nkw sql --fromat csv 'SELECT 1' (usage error)": [*CLI, "sql", "--fromat", "csv", "SELECT 1"],
    "nkw biuld (usage error)": [*CLI, "biuld"],
}


def seconds(command: list[str]) -> float:
    """Wall time of one process running `command` to its end."""
    started = time.perf_counter()
    subprocess.run(command, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7, help="processes per case (default 7)")
    args = parser.parse_args()
    seconds(CASES["nkw --help"])  # warm the file cache and the bytecode once, not measured
    width = max(map(len, CASES))
    print(f"{'case':<{width}}  {'min':>6}  {'median':>6}  {'max':>6}  (s, {args.repeat} processes each)")
    for name, command in CASES.items():
        times = [seconds(command) for _ in range(args.repeat)]
        print(f"{name:<{width}}  {min(times):6.3f}  {statistics.median(times):6.3f}  {max(times):6.3f}")


if __name__ == "__main__":
    main()
