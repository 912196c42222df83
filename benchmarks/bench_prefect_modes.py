"""The fixed cost of Prefect per command: `nkw build` of one bundled sample (a fresh workspace each
time) and `nkw eval` of its questions (`--fresh`), each in a fresh process, in three modes:
`--no-prefect`; reporting to a Prefect server already running (found at the local address, as a
user's `prefect server start` would be); and with a temporary server of the command's own.

    python benchmarks/bench_prefect_modes.py [--repeat N] [--embeddings minilm|hashing]

The modes alternate within each round (the first mode rotates), so the host's load drifts over all
three alike. Prints each command's median wall time per mode (min–max), its extra over
`--no-prefect`, the temporary server's start-up as the command printed it, and the running
server's own start-up, paid once.
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CLI = [sys.executable, "-m", "flows.cli.main"]
SAMPLE = REPO / "data" / "samples" / "the_lighthouse_key.txt"
QUESTIONS = REPO / "data" / "samples" / "the_lighthouse_key.questions.jsonl"
MODES = ("no prefect", "running server", "temporary server")
READY = re.compile(r"prefect: temporary server ready in ([0-9.]+) s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _quiet_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(
        DO_NOT_TRACK="1",
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_UI_ENABLED="false",
        PREFECT_HOME=str(home),
        PYTHONPATH=str(REPO),
    )
    return env


def start_server(folder: Path) -> tuple[subprocess.Popen, str, float]:
    """`prefect server start` on a free local port: (process, API URL, seconds until it answered)."""
    port = _free_port()
    api = f"http://127.0.0.1:{port}/api"
    env = {k: v for k, v in _quiet_env(folder / "server-home").items() if "SERVER_SERVICES" not in k}
    log = open(folder / "server.log", "w")  # noqa: SIM115 - open as long as the server runs
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    while True:
        if server.poll() is not None:
            raise SystemExit(f"prefect server exited; see {folder / 'server.log'}")
        try:
            with urllib.request.urlopen(f"{api}/health", timeout=5) as reply:
                if reply.status == 200:
                    return server, api, time.perf_counter() - started
        except OSError:
            time.sleep(0.25)


def run(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    """Wall seconds of one `nkw` process and its stderr; exits when the command fails."""
    started = time.perf_counter()
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[3:5])} failed ({done.returncode}): {done.stderr[-800:]}")
    return seconds, done.stderr


def one_round(folder: Path, index: int, mode: str, api: str, embeddings: str) -> dict[str, float]:
    """Build and evaluate once in `mode`: wall seconds of each, and the temporary server's start-up."""
    env = _quiet_env(folder / "client-home")
    env["NKW_PREFECT_LOCAL_URL"] = api if mode == "running server" else ""
    flag = ["--no-prefect"] if mode == "no prefect" else []
    workspace = folder / f"ws-{index}-{mode.replace(' ', '-')}"
    build, build_err = run(
        [*CLI, "build", str(SAMPLE), "-w", str(workspace), "--embeddings", embeddings, *flag], env
    )
    evaluate, eval_err = run(
        [*CLI, "eval", "-w", str(workspace), "--questions", str(QUESTIONS), "--fresh", *flag], env
    )
    figures = {"build": build, "eval": evaluate}
    for name, stderr in (("build start-up", build_err), ("eval start-up", eval_err)):
        found = READY.search(stderr)
        if found:
            figures[name] = float(found.group(1))
    if mode == "running server" and f"runs reported to the server running at {api}" not in build_err:
        raise SystemExit("the build did not report to the running server: " + build_err[-800:])
    return figures


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.1f} s ({min(values):.1f}–{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of the three modes (default 3)")
    parser.add_argument("--embeddings", default="minilm", choices=["minilm", "hashing"])
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="nkw-prefect-modes-") as name:
        folder = Path(name)
        server, api, server_start = start_server(folder)
        results: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
        try:
            for index in range(args.repeat):
                order = MODES[index % 3 :] + MODES[: index % 3]
                for mode in order:
                    figures = one_round(folder, index, mode, api, args.embeddings)
                    results[mode].append(figures)
                    shown = ", ".join(f"{k} {v:.1f} s" for k, v in figures.items())
                    print(f"round {index + 1} {mode:>16}: {shown}", flush=True)
        finally:
            server.terminate()
            server.wait(60)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"\nthe running server's own start-up, paid once: {server_start:.1f} s")
    print(f"{'mode':>16}  {'nkw build (median, min-max)':>28}  {'extra':>7}  {'nkw eval':>22}  {'extra':>7}")
    base = {c: statistics.median(r[c] for r in results["no prefect"]) for c in ("build", "eval")}
    for mode in MODES:
        cells = []
        for command in ("build", "eval"):
            values = [r[command] for r in results[mode]]
            cells.append(f"{_spread(values):>28}  {statistics.median(values) - base[command]:+6.1f}s")
        print(f"{mode:>16}  {cells[0]}  {cells[1]}")
    starts = [
        r[k] for r in results["temporary server"] for k in ("build start-up", "eval start-up") if k in r
    ]
    if starts:
        print(f"temporary server start-up as printed: {_spread(starts)} over {len(starts)} commands")


if __name__ == "__main__":
    main()
