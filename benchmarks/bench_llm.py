"""LLM-path benchmark against the OpenAI-compatible test server: achieved concurrency and
tokens per 1k source tokens per stage.

The server adds a fixed latency per request (default 200 ms) and answers every stage's
prompt deterministically, in a process of its own as a real server is (`--inline-server`: in
the build's process, as before); the build runs every LLM stage with N requests in flight and
`--documents` documents at a time (`--runner process`, the default here: one worker process per
document sharing the bound; `thread`: Prefect's thread pool), each document's independent stages
`--stage-concurrency` at a time. Achieved concurrency = calls x latency / wall time from
the first request's arrival to the last reply (the window the goal is stated for); divided by
the configured limit it is the share of the server's slots kept busy (the client's request pool
measures the same from its side). The same over the whole build's wall (Prefect start-up, and
the CPU stages before the first request, included) is printed beside it. Tokens are counted in
the project's unit (tasks.text).

    python benchmarks/bench_llm.py [PATH ...] [--latency 0.2] [--concurrency 16] [--documents 3]
        [--stage-concurrency N] [--runner process|thread] [--inline-server]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.cli import prefect_environment  # noqa: E402
from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from flows.corpus import make_resources  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.llm.client import OpenAICompatibleClient  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fixtures.pipeline_llm import pipeline_responder  # noqa: E402
from tests.fixtures.server_process import ServerProcess  # noqa: E402
from tasks.text import count_tokens  # noqa: E402

STAGE_DEV = REPO.parent / "shared" / "data" / "stage" / "documents.jsonl"
SAMPLE = REPO / "data" / "samples" / "the_lighthouse_key.txt"


def idle_seconds(arrivals: list[float], latency: float) -> float:
    """Seconds between the first arrival and the last reply with no request at the server."""
    idle, busy_until = 0.0, None
    for arrived in sorted(arrivals):
        if busy_until is not None and arrived > busy_until:
            idle += arrived - busy_until
        busy_until = max(busy_until or arrived, arrived + latency)
    return idle


@contextmanager
def test_server(latency: float, inline: bool) -> Iterator[tuple[str, object]]:
    """(URL, a callable giving the chat arrival times) of the test server, in its own process or
    (`inline`) in this one."""
    if inline:
        with FakeOpenAIServer(
            model_names=("bench-model",),
            responder=pipeline_responder,
            latency_s=latency,
            count_tokens=count_tokens,
        ) as server:
            yield server.url, lambda: [r.arrived for r in server.chat_requests()]
    else:
        with ServerProcess(latency_s=latency) as server:
            yield server.url, lambda: [arrived for arrived, _ in server.arrivals()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server adds to every request")
    parser.add_argument("--concurrency", type=int, default=16, help="requests in flight")
    parser.add_argument("--documents", type=int, default=3, help="documents built at the same time")
    parser.add_argument("--stage-concurrency", type=int, default=None, help="stages of a document at a time")
    parser.add_argument(
        "--runner", choices=["process", "thread"], default="process", help="Prefect task runner"
    )
    parser.add_argument("--inline-server", action="store_true", help="the test server in the build's process")
    args = parser.parse_args()
    paths = args.paths or [str(STAGE_DEV if STAGE_DEV.exists() else SAMPLE)]
    prefect_environment()
    load_before = os.getloadavg()[0]
    with (
        tempfile.TemporaryDirectory() as folder,
        test_server(args.latency, args.inline_server) as (url, arrived),
    ):
        workspace = Workspace.at(Path(folder) / "ws")
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "build": {
                    "concurrency": args.documents,
                    **({"stage_concurrency": args.stage_concurrency} if args.stage_concurrency else {}),
                },
                "llm": {"url": url, "model": "bench-model", "concurrency": args.concurrency, "timeout_s": 30},
            }
        )
        with OpenAICompatibleClient(settings.llm) as client:
            started = time.perf_counter()
            report = build(
                paths,
                workspace,
                settings,
                resources=make_resources(settings, llm=client),
                quiet=True,
                runner=args.runner,
            )
            wall = time.perf_counter() - started
            pool = client.pool.achieved()
        calls = read_frame(workspace, "llm_calls")
        chunks = read_frame(workspace, "chunks")
        arrivals = arrived()
        llm_window = max(arrivals) + args.latency - min(arrivals)
    source_tokens = int(chunks["n_tokens"].sum())
    achieved = len(arrivals) * args.latency / llm_window
    print(
        f"inputs: {', '.join(Path(p).name for p in paths)}; {source_tokens:,} source tokens; "
        f"build {wall:.1f} s "
        f"(with Prefect start-up), ok={report.ok}"
    )
    print(
        f"LLM requests: {len(arrivals)} at {args.latency * 1000:.0f} ms each, {args.concurrency} in flight, "
        f"{args.documents} documents at a time ({args.runner} runner), {settings.build.stage_concurrency} "
        f"stages of each; test server {'inline' if args.inline_server else 'in its own process'}; "
        f"first request to last reply {llm_window:.1f} s"
    )
    print(
        f"achieved concurrency (calls x latency / wall time): {achieved:.1f}; achieved / configured "
        f"{achieved / args.concurrency:.2f}"
        # The build process's pool measures its own requests: all of them only with threads.
        f"{f' (client pool: {pool:.2f})' if args.runner == 'thread' else ''}; over the build's whole wall "
        f"{len(arrivals) * args.latency / wall / args.concurrency:.2f}"
    )
    idle = idle_seconds(arrivals, args.latency)
    print(
        f"server idle (no request in flight) {idle:.1f} s of the {llm_window:.1f} s window; "
        f"while busy, {len(arrivals) * args.latency / max(1e-9, llm_window - idle):.1f} in flight on average"
    )
    print(f"load average (1 min) {load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end")
    print(f"{'stage':<24} {'calls':>6} {'prompt tok / 1k src':>20} {'completion tok / 1k src':>24}")
    for stage, group in calls.groupby("stage", sort=False):
        print(
            f"{stage:<24} {len(group):>6} {group['prompt_tokens'].sum() * 1000 / source_tokens:>20.0f} "
            f"{group['completion_tokens'].sum() * 1000 / source_tokens:>24.0f}"
        )


if __name__ == "__main__":
    main()
