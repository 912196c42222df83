"""LLM-path benchmark against the OpenAI-compatible test server: achieved concurrency and
tokens per 1k source tokens per stage.

Every request takes a fixed latency at the server, the fake model's own answering included (default
200 ms; `--decode-ms-per-token` adds time per completion token too, as a real server's decoding
does), and the server answers every stage's prompt deterministically, in a process of its own as a
real server is (`--inline-server`: in the build's process, as before); the build runs every LLM
stage with N requests in flight and `--documents` documents at a time (`--runner process`, the
default here: one worker process per document sharing the bound; `thread`: Prefect's thread pool),
each document's independent stages `--stage-concurrency` at a time. Achieved concurrency = the
server's busy request-seconds over the window from the first request's arrival to the last reply
(the window the goal is stated for) (with a fixed latency: calls x latency / window); divided by
the configured limit it is the share of the server's slots kept busy. The same over the whole
build's wall (Prefect start-up, and the CPU stages before the first request, included) is printed
beside it, and so are the machine's busy cores while the server held under half its limit and while
it was full (machine_cpu.py: whether the server waited on a stage or on the CPU). Tokens are
counted in the project's unit (tasks.text).

On a shared 2-core host the ratio moves by several hundredths from one build to the next;
`--repeat N` measures N builds one after another, prints the first in full and each one's ratio,
then their range, median and how many met the goal.

    python benchmarks/bench_llm.py [PATH ...] [--latency 0.2] [--concurrency 16] [--documents 3]
        [--stage-concurrency N] [--runner process|thread] [--inline-server] [--decode-ms-per-token 0]
        [--repeat 1]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from machine_cpu import CpuSampler, cpu_by_server_load  # noqa: E402

from flows.build.corpus import make_resources  # noqa: E402
from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from flows.cli.main import prefect_environment  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.llm.client.openai_client import OpenAICompatibleClient  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tasks.text import count_tokens  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fixtures.pipeline_llm import pipeline_responder  # noqa: E402
from tests.fixtures.server_process import ServerProcess  # noqa: E402

STAGE_DEV = REPO.parent / "shared" / "data" / "stage" / "documents.jsonl"
SAMPLE = REPO / "data" / "samples" / "the_lighthouse_key.txt"


def idle_seconds(busy: list[tuple[float, float]]) -> float:
    """Seconds between the first arrival and the last reply with no request at the server."""
    idle, busy_until = 0.0, None
    for start, end in sorted(busy):
        if busy_until is not None and start > busy_until:
            idle += start - busy_until
        busy_until = max(busy_until or start, end)
    return idle


@contextmanager
def test_server(
    latency: float, inline: bool, decode_ms: float = 0.0
) -> Iterator[tuple[str, Callable[[], list[tuple[float, float]]]]]:
    """(URL, a callable giving the (start, end) of every chat request) of the test server, in its
    own process or (`inline`) in this one."""
    if inline:
        with FakeOpenAIServer(
            model_names=("bench-model",),
            responder=pipeline_responder,
            latency_s=latency,
            decode_s_per_token=decode_ms / 1000,
            count_tokens=count_tokens,
        ) as server:
            yield server.url, lambda: list(server.busy)
    else:
        with ServerProcess(latency_s=latency, decode_ms_per_token=decode_ms) as server:
            yield server.url, server.busy


def measure_concurrency(
    paths: list[str],
    latency: float = 0.2,
    concurrency: int = 16,
    documents: int = 3,
    stage_concurrency: int | None = None,
    runner: str = "process",
    inline: bool = False,
    decode_ms: float = 0.0,
) -> dict[str, Any]:
    """Build `paths` through the test server and measure how busy the build kept it."""
    with tempfile.TemporaryDirectory() as folder, test_server(latency, inline, decode_ms) as (url, served):
        workspace = Workspace.at(Path(folder) / "ws")
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "build": {
                    "concurrency": documents,
                    **({"stage_concurrency": stage_concurrency} if stage_concurrency else {}),
                },
                "llm": {"url": url, "model": "bench-model", "concurrency": concurrency, "timeout_s": 300},
            }
        )
        with OpenAICompatibleClient(settings.llm) as client, CpuSampler(os.cpu_count() or 1) as cpu:
            started = time.perf_counter()
            report = build(
                paths,
                workspace,
                settings,
                resources=make_resources(settings, llm=client),
                quiet=True,
                runner=runner,
            )
            wall = time.perf_counter() - started
            pool = client.pool.achieved()
        calls = read_frame(workspace, "llm_calls")
        source_tokens = int(read_frame(workspace, "chunks")["n_tokens"].sum())
        busy = served()
    window = max(end for _, end in busy) - min(start for start, _ in busy) if busy else 0.0
    seconds = sum(end - start for start, end in busy)
    return {
        "paths": paths,
        "ok": report.ok,
        "wall": wall,
        "requests": len(busy),
        "window": window,
        "busy_seconds": seconds,
        # With a fixed latency, the measure of earlier runs: calls x latency over the window.
        "achieved": (len(busy) * latency if not decode_ms else seconds) / window / concurrency
        if window
        else 0.0,
        "over_wall": (len(busy) * latency if not decode_ms else seconds) / wall / concurrency,
        # The server's own intervals: its answering time (the test server reads every prompt to
        # write its reply) counts as in flight, as a real server's does.
        "in_flight": seconds / window if window else 0.0,
        "idle": idle_seconds(busy),
        "cpu": cpu_by_server_load(cpu.samples, busy, concurrency),
        "client_pool": pool if runner == "thread" else None,  # a worker's pool sees its own requests only
        "calls": calls,
        "source_tokens": source_tokens,
        "settings": {
            "latency": latency,
            "concurrency": concurrency,
            "documents": documents,
            "runner": runner,
            "stage_concurrency": settings.build.stage_concurrency,
            "inline": inline,
            "decode_ms": decode_ms,
        },
    }


def print_concurrency(run: dict[str, Any]) -> None:
    s = run["settings"]
    names = ", ".join(Path(p).name for p in run["paths"])
    print(
        f"inputs: {names}; {run['source_tokens']:,} source tokens; build {run['wall']:.1f} s "
        f"(with Prefect start-up), ok={run['ok']}"
    )
    decode = f" + {s['decode_ms']:g} ms per completion token" if s["decode_ms"] else ""
    where = "inline" if s["inline"] else "in its own process"
    print(
        f"LLM requests: {run['requests']} at {s['latency'] * 1000:.0f} ms each{decode}, "
        f"{s['concurrency']} in flight, {s['documents']} documents at a time ({s['runner']} runner), "
        f"{s['stage_concurrency']} stages of each; test server {where}; first request to last reply "
        f"{run['window']:.1f} s"
    )
    pool = f" (client pool: {run['client_pool']:.2f})" if run["client_pool"] is not None else ""
    print(
        f"achieved concurrency: {run['achieved'] * s['concurrency']:.1f}; achieved / configured "
        f"{run['achieved']:.2f}{pool}; over the build's whole wall {run['over_wall']:.2f}"
    )
    busy_window = max(1e-9, run["window"] - run["idle"])
    print(
        f"requests at the server on average over the window (its own start and end of each): "
        f"{run['in_flight']:.1f} = {run['in_flight'] / s['concurrency']:.2f} of the configured "
        f"(mean time per request at the server {run['busy_seconds'] / max(1, run['requests']) * 1000:.0f} ms)"
    )
    print(
        f"server idle (no request in flight) {run['idle']:.1f} s of the {run['window']:.1f} s window; "
        f"while busy, {run['busy_seconds'] / busy_window:.1f} in flight on average"
    )
    if run["cpu"]:
        print(
            f"machine CPU within the window ({os.cpu_count()} cores): "
            + "; ".join(
                f"server {name} for {seconds:.1f} s: {cores:.2f} cores busy"
                for name, (seconds, cores) in run["cpu"].items()
            )
        )


GOAL = 0.8  # achieved / configured concurrency (the Cost issue's row 2)


def print_repeats(runs: list[dict[str, Any]]) -> None:
    """Each build's ratio, then the spread: one build's figure says little on a busy host."""
    ratios = [run["achieved"] for run in runs]
    for number, run in enumerate(runs, 1):
        print(
            f"run {number}: achieved / configured {run['achieved']:.2f}; window {run['window']:.1f} s, "
            f"server idle {run['idle']:.1f} s, ok={run['ok']}"
        )
    met = sum(ratio >= GOAL for ratio in ratios)
    print(
        f"achieved / configured over {len(runs)} builds: {min(ratios):.2f}-{max(ratios):.2f}, median "
        f"{statistics.median(ratios):.3f}; at least {GOAL} in {met} of {len(runs)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server adds to every request")
    parser.add_argument(
        "--decode-ms-per-token", type=float, default=0.0, help="milliseconds per completion token"
    )
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument("--documents", type=int, default=3, help="documents built at the same time")
    parser.add_argument("--stage-concurrency", type=int, default=None, help="stages of a document at a time")
    parser.add_argument(
        "--runner", choices=["process", "thread"], default="process", help="Prefect task runner"
    )
    parser.add_argument("--inline-server", action="store_true", help="the test server in the build's process")
    parser.add_argument(
        "--repeat", type=int, default=1, help="builds measured one after another (their spread is printed)"
    )
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    paths = args.paths or [str(STAGE_DEV if STAGE_DEV.exists() else SAMPLE)]
    prefect_environment()
    load_before = os.getloadavg()[0]
    runs = [
        measure_concurrency(
            paths,
            args.latency,
            args.concurrency,
            args.documents,
            args.stage_concurrency,
            args.runner,
            args.inline_server,
            args.decode_ms_per_token,
        )
        for _ in range(args.repeat)
    ]
    run = runs[0]
    print_concurrency(run)
    if len(runs) > 1:
        print_repeats(runs)
    print(f"load average (1 min) {load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end")
    calls, source_tokens = run["calls"], run["source_tokens"]
    print(f"{'stage':<24} {'calls':>6} {'prompt tok / 1k src':>20} {'completion tok / 1k src':>24}")
    for stage, group in calls.groupby("stage", sort=False):
        print(
            f"{stage:<24} {len(group):>6} {group['prompt_tokens'].sum() * 1000 / source_tokens:>20.0f} "
            f"{group['completion_tokens'].sum() * 1000 / source_tokens:>24.0f}"
        )


if __name__ == "__main__":
    main()
