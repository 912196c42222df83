"""What a revision costs through the LLM path: build a screenplay against the OpenAI-compatible
test server with the workspace's LLM cache, add one sentence to one scene, rebuild, and print the
requests and prompt tokens each build sent to the server, per stage, with the rebuild's share of the
first build's; then build the edited text clean (a new workspace, its LLM cache warm) and say
whether its tables equal the rebuild's.

The default is Birthday Girl from the STAGE development set (177 scenes; the shared data folder is
$NKW_SHARED_DATA, else ../shared/data beside the clone), scene 121. Prompt tokens
are counted in the project's unit (tasks.text), by the server.

    python benchmarks/bench_revision.py [--documents PATH] [--doc-id ID] [--scene 121]
        [--sentence TEXT] [--prefect]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.build.corpus import build, make_resources  # noqa: E402
from flows.build_corpus import build_with_prefect  # noqa: E402
from flows.cli.main import prefect_environment  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.llm.client.factory import build_llm_client  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402
from tasks.text import count_tokens  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fixtures.pipeline_llm import pipeline_responder  # noqa: E402
from tests.fixtures.revisions import StageCost, add_sentence, asked, table_differences, total  # noqa: E402

SHARED = Path(os.environ.get("NKW_SHARED_DATA") or REPO.parent / "shared" / "data")
STAGE_DEV = SHARED / "stage" / "documents.jsonl"
BIRTHDAY_GIRL = "en049957b3c0b54085baddbec23e00506c"
SENTENCE = "John checks his watch and says nothing."


def one_document(path: Path, doc_id: str | None) -> dict:
    """The first line of a documents.jsonl file, or the one whose doc_id is `doc_id`."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if doc_id is None or record.get("doc_id") == doc_id:
                return record
    raise SystemExit(f"error: no document {doc_id} in {path}")


def write_document(path: Path, record: dict) -> str:
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")
    return str(path)


def run_build(path: str, workspace: Workspace, url: str, prefect: bool) -> float:
    """Build `path` into `workspace` through the test server, with the workspace's LLM cache."""
    settings = load_settings(
        overrides={
            "embed_texts": {"backend": "hashing"},
            "llm": {"url": url, "model": "bench-model", "concurrency": 8, "timeout_s": 300},
        }
    )
    started = time.perf_counter()
    with build_llm_client(settings.llm, None, workspace.cache_dir / "llm") as client:
        resources = make_resources(settings, llm=client)
        run = build_with_prefect if prefect else build
        report = run([path], workspace, settings, resources=resources, quiet=True)
    if not report.ok:
        raise SystemExit(f"error: the build did not succeed: {report.summary()}")
    return time.perf_counter() - started


def print_costs(first: dict[str, StageCost], rebuild: dict[str, StageCost]) -> None:
    print(f"{'stage':<26} {'first build':>22} {'rebuild':>22} {'share of tokens':>16}")
    for stage in list(first) + [s for s in rebuild if s not in first]:
        a, b = first.get(stage, StageCost(0, 0)), rebuild.get(stage, StageCost(0, 0))
        share = f"{b.prompt_tokens / a.prompt_tokens:.1%}" if a.prompt_tokens else "-"
        print(
            f"{stage:<26} {a.requests:>5} req {a.prompt_tokens:>8,} tok "
            f"{b.requests:>5} req {b.prompt_tokens:>8,} tok {share:>16}"
        )
    a, b = total(first), total(rebuild)
    print(
        f"{'all LLM stages':<26} {a.requests:>5} req {a.prompt_tokens:>8,} tok "
        f"{b.requests:>5} req {b.prompt_tokens:>8,} tok {b.prompt_tokens / max(1, a.prompt_tokens):>16.1%}"
    )
    print(
        f"rebuild / first build: requests {b.requests / max(1, a.requests):.1%}, "
        f"prompt tokens {b.prompt_tokens / max(1, a.prompt_tokens):.1%} (goal: at most 10%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=Path, default=STAGE_DEV, help="a documents.jsonl file")
    parser.add_argument("--doc-id", default=None, help=f"the document to build (default: {BIRTHDAY_GIRL})")
    parser.add_argument("--scene", type=int, default=121, help="the scene the sentence is added to")
    parser.add_argument("--sentence", default=SENTENCE)
    parser.add_argument("--prefect", action="store_true", help="build through Prefect task runs")
    args = parser.parse_args()
    if not args.documents.exists():
        raise SystemExit(f"error: {args.documents} not found")
    doc_id = args.doc_id or (BIRTHDAY_GIRL if args.documents == STAGE_DEV else None)
    record = one_document(args.documents, doc_id)
    edited = {**record, "text": add_sentence(record["text"], args.scene, args.sentence)}
    if args.prefect:
        prefect_environment()
    with (
        tempfile.TemporaryDirectory() as folder,
        FakeOpenAIServer(
            model_names=("bench-model",), responder=pipeline_responder, count_tokens=count_tokens
        ) as server,
    ):
        root = Path(folder)
        workspace, clean = Workspace.at(root / "ws"), Workspace.at(root / "clean")
        source = root / "input.jsonl"
        first_s = run_build(write_document(source, record), workspace, server.url, args.prefect)
        first = asked(workspace, record["doc_id"])
        rebuild_s = run_build(write_document(source, edited), workspace, server.url, args.prefect)
        rebuild = asked(workspace, record["doc_id"])
        # The clean build of the edited text: a new workspace whose LLM cache holds every reply.
        shutil.copytree(workspace.cache_dir / "llm", clean.cache_dir / "llm")
        run_build(str(source), clean, server.url, args.prefect)
        clean_cost = total(asked(clean, record["doc_id"]))
        differences = table_differences(workspace, clean, record["doc_id"])
    print(
        f"{record.get('title') or record['doc_id']}: one sentence added to scene {args.scene} "
        f"({len(args.sentence.split())} words); first build {first_s:.1f} s, rebuild {rebuild_s:.1f} s"
    )
    print_costs(first, rebuild)
    print(f"clean build of the edited text (warm cache): {clean_cost.requests} requests to the server")
    if differences:
        print("tables differ from the clean build: " + "; ".join(f"{k}: {v}" for k, v in differences.items()))
    else:
        print("tables equal a clean build of the edited text: yes")


if __name__ == "__main__":
    main()
