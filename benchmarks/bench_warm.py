"""Warm against cold answers: seconds per question through `nkw serve` (model and bundles loaded
once), through `nkw ask --questions FILE` (one load for the file), and through a fresh `nkw ask`
process per question (loads everything every time), as p50 / p95.

    python benchmarks/bench_warm.py --workspace W --questions Q.jsonl [--cold N] [--warm N]

Without --workspace it builds the bundled samples in a temporary workspace first.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tasks.tables.io import Workspace  # noqa: E402
from tasks.tables.manifest import list_manifests  # noqa: E402

SAMPLES = REPO / "data" / "samples"
CLI = [sys.executable, "-m", "flows.cli.main"]


def _questions(path: Path, limit: int) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [{"doc": r["doc_id"], "question": r["question"], "options": r.get("options")} for r in rows][
        :limit
    ]


def _percentiles(seconds: list[float]) -> str:
    values = np.array(seconds) * 1000
    return (
        f"p50 {np.percentile(values, 50):8.0f} ms   p95 {np.percentile(values, 95):8.0f} ms   "
        f"(n={len(values)})"
    )


def cold(workspace: Path, questions: list[dict]) -> list[float]:
    """A fresh `nkw ask` process per question, as a person typing commands would run it."""
    times = []
    for item in questions:
        argv = [*CLI, "ask", "-w", str(workspace), "--doc", item["doc"], item["question"], "--json"]
        for option in item["options"] or []:
            argv += ["--option", option]
        started = time.perf_counter()
        _run(argv)
        times.append(time.perf_counter() - started)
    return times


def batch(workspace: Path, questions: list[dict], folder: Path) -> tuple[float, int]:
    """One `nkw ask --questions FILE` process for every question: (wall seconds, questions)."""
    path = folder / "batch.jsonl"
    path.write_text(
        "\n".join(
            json.dumps({"doc_id": q["doc"], "question": q["question"], "options": q["options"]})
            for q in questions
        )
        + "\n",
        encoding="utf-8",
    )
    started = time.perf_counter()
    _run([*CLI, "ask", "-w", str(workspace), "--questions", str(path), "--json"])
    return time.perf_counter() - started, len(questions)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def warm(workspace: Path, questions: list[dict]) -> tuple[float, list[float]]:
    """(startup seconds until /health answers, seconds per POST /ask) against one `nkw serve`."""
    port = _free_port()
    started = time.perf_counter()
    server = subprocess.Popen(
        [*CLI, "serve", "-w", str(workspace), "--port", str(port)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"nkw serve exited: {server.stderr.read().decode()[-400:]}")
            try:
                urllib.request.urlopen(f"{base}/health", timeout=1).read()
                break
            except OSError:
                time.sleep(0.2)
        startup = time.perf_counter() - started
        times = []
        for item in questions:
            body = json.dumps(
                {"doc": item["doc"], "question": item["question"], "options": item["options"]}
            ).encode()
            request = urllib.request.Request(f"{base}/ask", body, {"content-type": "application/json"})
            began = time.perf_counter()
            json.loads(urllib.request.urlopen(request, timeout=120).read())
            times.append(time.perf_counter() - began)
        return startup, times
    finally:
        server.terminate()
        server.wait(timeout=30)


def _run(argv: list[str]) -> None:
    """Run a CLI step; its failure ends the benchmark with the CLI's own last line, not a traceback."""
    done = subprocess.run(argv, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or [f"exit {done.returncode}"]
        sys.exit(f"bench_warm: `nkw {argv[3]}` failed: {lines[-1]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspace")
    parser.add_argument("--questions", nargs="*")
    parser.add_argument("--cold", type=int, default=5, help="questions asked through fresh processes")
    parser.add_argument(
        "--warm", type=int, default=20, help="questions asked through the server and the batch"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.workspace:
            workspace = Path(args.workspace)
            paths = [Path(q) for q in args.questions or []] or sorted(SAMPLES.glob("*.questions.jsonl"))
        else:
            workspace = Path(folder) / "ws"
            _run(
                [
                    *CLI,
                    "build",
                    str(SAMPLES / "the_lighthouse_key.txt"),
                    str(SAMPLES / "the_fisherman_and_his_wife.txt"),
                    "-w",
                    str(workspace),
                    "--quiet",
                    "--no-prefect",
                ]
            )
            paths = sorted(SAMPLES.glob("*.questions.jsonl"))
        built = {m.doc_id for m in list_manifests(Workspace.at(workspace))}
        questions = [q for path in paths for q in _questions(path, 10_000) if q["doc"] in built]
        if not questions:
            # Asking about a document the workspace does not hold only measures a 404.
            sys.exit(
                f"bench_warm: no question is about a document built in {workspace} "
                f"(built: {', '.join(sorted(built)) or 'none'}); pass --questions for them"
            )
        startup, served = warm(workspace, questions[: args.warm])
        batch_seconds, batch_n = batch(workspace, questions[: args.warm], Path(folder))
        fresh = cold(workspace, questions[: args.cold])
    print(f"workspace {workspace.name}: {len(questions)} questions available")
    print(f"cold  fresh `nkw ask` per question      {_percentiles(fresh)}")
    print(f"warm  `nkw serve` POST /ask             {_percentiles(served)}   startup {startup:.1f} s")
    print(
        f"batch `nkw ask --questions FILE`        {batch_seconds / batch_n * 1000:8.0f} ms per question "
        f"(wall {batch_seconds:.1f} s for {batch_n}, one load)"
    )


if __name__ == "__main__":
    main()
