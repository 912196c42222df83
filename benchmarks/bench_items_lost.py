"""Items lost by the LLM path against a server that answers the minimum its schema asks for.

The test server (tests/fixtures/openai_server.py) writes, for every structured request, the
smallest JSON the schema allows: one item in a free list, exactly n in a fixed-count list. A
grouped stage whose reply schema does not fix the number of answers loses items against it; one
that does loses none. The build runs every LLM stage through that server, then once more: the
second build must send no request (every reply comes from the cache).

    python benchmarks/bench_items_lost.py [PATH ...]      # default: the FairytaleQA dev stories,
                                                          # else the bundled samples

Prints, per stage, the items sent, the requests and the items lost (failures rows), then the
requests of the rebuild.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.build.corpus import build, make_resources  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.llm.client.cache import LLMCache  # noqa: E402
from tasks.llm.client.openai_client import OpenAICompatibleClient  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402

SHARED_DEV = REPO.parent / "shared" / "data" / "fairytaleqa" / "documents.jsonl"
SAMPLES = sorted(str(p) for p in (REPO / "data" / "samples").glob("*.txt"))


def build_through_minimal_server(paths: list[str]) -> dict:
    """Two builds of `paths` through the schema-minimal server; figures of each."""
    with tempfile.TemporaryDirectory() as folder, FakeOpenAIServer(model_names=("minimal",)) as server:
        workspace = Workspace.at(Path(folder) / "ws")
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {"url": server.url, "model": "minimal", "concurrency": 4},
            }
        )
        runs = []
        for _ in range(2):
            before = len(server.chat_requests())
            started = time.perf_counter()
            with OpenAICompatibleClient(settings.llm, cache=LLMCache(workspace.root / "llm_cache")) as client:
                resources = make_resources(settings, llm=client)
                report = build(paths, workspace, settings, resources=resources, quiet=True)
            requests = len(server.chat_requests()) - before
            runs.append({"ok": report.ok, "requests": requests, "wall": time.perf_counter() - started})
        calls = read_frame(workspace, "llm_calls")
        failures = read_frame(workspace, "failures")
    return {"runs": runs, "calls": calls, "failures": failures}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", help="documents (default: FairytaleQA dev, else the samples)")
    args = parser.parse_args()
    paths = args.paths or ([str(SHARED_DEV)] if SHARED_DEV.exists() else SAMPLES)
    result = build_through_minimal_server(paths)
    calls, failures = result["calls"], result["failures"]
    print(f"documents: {', '.join(Path(p).name for p in paths)}")
    print(f"{'stage':<26} {'requests':>9} {'lost items':>11}")
    lost_by_stage = failures.groupby("stage").size() if not failures.empty else {}
    for stage, group in calls.groupby("stage"):
        print(f"{stage:<26} {len(group):>9} {int(lost_by_stage.get(stage, 0)):>11}")
    first, second = result["runs"]
    status = "0" if first["ok"] else "1"
    lost = len(failures)
    print(f"build: exit {status}, {first['requests']} requests, {lost} items lost, {first['wall']:.1f} s")
    print(f"rebuild: {second['requests']} requests, {second['wall']:.1f} s")
    return 0 if first["ok"] and failures.empty and second["requests"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
