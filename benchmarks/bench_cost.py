"""Cost benchmark: every row of the cost table in one run, on one STAGE dev screenplay
(Birthday Girl by default).

1. LLM prompt tokens / source tokens per stage and in total, through the OpenAI-compatible
   test server (tokens per stage item are also projected at the offline build's item counts,
   so the figure does not depend on the fake model's reply sizes);
2. achieved / configured LLM concurrency (calls x latency / (window x in-flight limit));
3. `--dry-run` estimate vs actual calls and prompt tokens per stage;
4. offline build wall time / embedding floor (the document's sentences embedded once with the
   same model, in the same process, model already loaded);
5. offline answer latency p50 for `--system nkw` and `hybrid`, model and bundle loaded;
6. `nkw ask` start-up (process wall time minus the answer's own latency).

    python benchmarks/bench_cost.py [--doc-title "Birthday Girl"] [--latency 0.2] [--concurrency 16]
                                    [--offline-only] [--quoting-vectors embedded]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

try:  # the process settings the CLI applies at start (absent in older trees)
    from flows.runtime import configure_process
except ImportError:  # pragma: no cover - measuring a tree from before the change
    configure_process = None
if configure_process is not None:
    configure_process()

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from flows.answer_questions import QueryEngine, warm_up  # noqa: E402
from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from flows.corpus import make_resources  # noqa: E402
from flows.prefect_server import reap_with_this_process  # noqa: E402
from flows.dry_run import dry_run  # noqa: E402
from flows.evaluation import load_questions  # noqa: E402
from flows.stages import select_stages  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.embeddings import build_embedder  # noqa: E402
from tasks.llm.client import OpenAICompatibleClient  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tasks.tables.manifest import list_manifests  # noqa: E402
from tasks.text import count_tokens  # noqa: E402
from tests.fixtures.openai_server import FakeOpenAIServer  # noqa: E402
from tests.fixtures.pipeline_llm import pipeline_responder  # noqa: E402

STAGE = REPO.parent / "shared" / "data" / "stage"
TASKS = str(REPO / "tasks") + os.sep  # stage modules: the build's embedding calls are counted per stage
PRICE_PER_MILLION = 0.5
LLM_STAGES = (
    "extract_graph",
    "canonicalize_entities",
    "extract_narrative",
    "extract_facts",
    "assemble_episodes",
    "relate_episodes",
    "break_cycles",
    "induce_storylines",
)
try:  # prompt tokens counted in the unit of the source tokens (a fixture from before counts words)
    FakeOpenAIServer(count_tokens=count_tokens)
    TOKEN_UNIT: dict = {"count_tokens": count_tokens}
except TypeError:  # pragma: no cover - measuring a tree from before the change
    TOKEN_UNIT = {}
DOWNSTREAM_STAGES = ("judge_continuity", "chain_continuity", "track_character_states")


def write_inputs(folder: Path, title: str) -> tuple[Path, str, Path]:
    """The one document (and its questions) as a benchmark documents.jsonl / questions.jsonl pair."""
    documents = [
        json.loads(line)
        for line in (STAGE / "documents.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    document = next(d for d in documents if d["title"] == title)
    doc_path, questions_path = folder / "documents.jsonl", folder / "questions.jsonl"
    doc_path.write_text(json.dumps(document, ensure_ascii=False) + "\n", encoding="utf-8")
    questions = [
        line
        for line in (STAGE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["doc_id"] == document["doc_id"]
    ]
    questions_path.write_text("\n".join(questions) + "\n", encoding="utf-8")
    return doc_path, document["doc_id"], questions_path


def stage_items(workspace: Workspace) -> dict[str, int]:
    """The item count each LLM stage works over (the unit its calls scale with)."""

    def rows(table: str) -> int:
        return len(read_frame(workspace, table))

    units = rows("events") + rows("interactions") + rows("occasions")
    return {
        "extract_graph": rows("chunks"),
        "extract_narrative": rows("chunks"),
        "canonicalize_entities": rows("raw_entities"),
        "extract_facts": rows("entities"),
        "assemble_episodes": units,
        "relate_episodes": rows("episodes"),
        "break_cycles": rows("episode_links"),
        "induce_storylines": rows("episodes"),
        "judge_continuity": rows("continuity_candidates"),
        "chain_continuity": rows("continuity_judgments"),
        "track_character_states": rows("character_states"),
    }


def asked_items(workspace: Workspace) -> dict[str, int]:
    """The items each LLM stage puts into its requests (what a request holds up to its
    `max_*_per_request` or token budget): open merge pairs (decided `llm`, or `rule:no_evidence`
    offline), episodes, candidate pairs, shortcut questions (rules `llm_*`), storylines,
    continuity candidates asked, preliminary chains, scenes with character states."""

    def frame(table: str):
        return read_frame(workspace, table)

    merges, actions, chains = frame("merge_decisions"), frame("saber_actions"), frame("continuity_chains")
    asked = actions[actions["rule"].astype(str).str.startswith("llm_")] if len(actions) else actions
    pairs = sum(
        int(m.stages["relate_episodes"].details.get("candidate_pairs") or 0)
        for m in list_manifests(workspace)
        if "relate_episodes" in m.stages
    )
    states = frame("character_states")
    candidates = frame("continuity_candidates")
    per_doc = candidates.groupby("doc_id").size() if len(candidates) else pd.Series(dtype=int)
    return {
        "canonicalize_entities": int(merges["method"].isin(["llm", "rule:no_evidence"]).sum()),
        "assemble_episodes": len(frame("episodes")),
        "relate_episodes": pairs,
        "break_cycles": len(asked.drop_duplicates(["doc_id", "relation_id"])) if len(asked) else 0,
        "induce_storylines": len(frame("storylines")),
        "judge_continuity": int(per_doc.clip(upper=load_settings().continuity.max_candidates).sum()),
        "chain_continuity": int((chains["kind"] == "preliminary").sum()) if len(chains) else 0,
        "track_character_states": int(states["section_id"].nunique()) if len(states) else 0,
    }


def llm_build(doc_path: Path, folder: Path, latency: float, concurrency: int, previous: Workspace) -> dict:
    with FakeOpenAIServer(
        model_names=("bench-model",), responder=pipeline_responder, latency_s=latency, **TOKEN_UNIT
    ) as server:
        workspace = Workspace.at(folder / "llm")
        settings = load_settings(
            overrides={
                "embed_texts": {"backend": "hashing"},
                "llm": {
                    "url": server.url,
                    "model": "bench-model",
                    "concurrency": concurrency,
                    "timeout_s": 30,
                },
            }
        )
        try:  # a previous (offline) build's entity and episode counts, where the dry run can use them
            estimate = dry_run([str(doc_path)], select_stages(), settings, previous, PRICE_PER_MILLION)
        except TypeError:  # pragma: no cover - a tree from before the dry run took a workspace
            estimate = {"stages": dry_run([str(doc_path)], select_stages(), settings)["stages"]}
        with OpenAICompatibleClient(settings.llm) as client:
            started = time.perf_counter()
            report = build(
                [str(doc_path)],
                workspace,
                settings,
                resources=make_resources(settings, llm=client),
                quiet=True,
            )
            wall = time.perf_counter() - started
        arrivals = sorted(r.arrived for r in server.chat_requests())
        try:  # the same dry run once this build exists: its own items, the rebuild estimate
            rebuild = dry_run([str(doc_path)], select_stages(), settings, workspace, PRICE_PER_MILLION)
        except TypeError:  # pragma: no cover - a tree from before the dry run took a workspace
            rebuild = {"stages": []}
    calls = read_frame(workspace, "llm_calls")
    return {
        "workspace": workspace,
        "wall": wall,
        "ok": report.ok,
        "calls": calls,
        "arrivals": arrivals,
        "estimate": {row["stage"]: row for row in estimate["stages"]},
        "rebuild": {row["stage"]: row for row in rebuild["stages"]},
        "cost": estimate.get("cost"),
        "source_tokens": int(read_frame(workspace, "chunks")["n_tokens"].sum()),
        "items": stage_items(workspace),
        "asked": asked_items(workspace),
    }


class CountingEmbedder:
    """The model embedder, counting texts, tokens and seconds per calling stage (the outermost
    module under tasks/ on the stack: the stage's own, whichever helper made the call)."""

    def __init__(self, inner) -> None:
        self.inner, self.name = inner, inner.name
        self.by_caller: dict[str, list[float]] = {}

    def embed(self, texts):
        caller = "?"
        for frame in traceback.extract_stack():
            if frame.filename.startswith(TASKS) and "vector_store" not in frame.filename:
                caller = Path(frame.filename).stem
                break
        started = time.perf_counter()
        vectors = self.inner.embed(texts)
        entry = self.by_caller.setdefault(caller, [0, 0, 0.0])
        entry[0] += len(texts)
        entry[1] += sum(count_tokens(t) for t in texts)
        entry[2] += time.perf_counter() - started
        return vectors


def offline_build(
    doc_path: Path,
    folder: Path,
    embeddings: str | None = None,
    chunk_vectors: str | None = None,
    hierarchy_vectors: str | None = None,
    derived: str | None = None,
) -> dict:
    section = {"backend": embeddings, "chunk_vectors": chunk_vectors}
    overrides = {"embed_texts": {k: v for k, v in section.items() if v}}
    if hierarchy_vectors:
        overrides["embed_assets"] = {"hierarchy_vectors": hierarchy_vectors}
    if derived == "embedded":  # texts quoting sentences, and relate_episodes' episodes, embedded whole
        overrides.setdefault("embed_assets", {})["grounded_vectors"] = "embedded"
        overrides["assemble_episodes"] = {"unit_vectors": "embedded"}
        overrides["relate_episodes"] = {"episode_vectors": "embedded"}
    settings = load_settings(overrides=overrides)
    embedder = build_embedder(settings.embed_texts)
    embedder.embed(["load the model"])  # model load is paid before either timing
    counting = CountingEmbedder(embedder)
    workspace = Workspace.at(folder / "offline")
    started = time.perf_counter()
    reap_with_this_process()  # Prefect's temporary server: a per-process start-up, like the model load
    server_start = time.perf_counter() - started
    started, cpu_started = time.perf_counter(), time.process_time()
    report = build(
        [str(doc_path)],
        workspace,
        settings,
        resources=make_resources(settings, embedder_factory=lambda: counting),
        quiet=True,
    )
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    sentences = read_frame(workspace, "sentences")["text"].tolist()
    started, cpu_started = time.perf_counter(), time.process_time()
    embedder.embed(sentences)
    floor, floor_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    stage_seconds = {}
    for manifest in list_manifests(workspace):
        for name, record in manifest.stages.items():
            stage_seconds[name] = stage_seconds.get(name, 0.0) + record.seconds
    return {
        "workspace": workspace,
        "wall": wall,
        "server_start": server_start,
        "cpu": cpu,
        "floor_cpu": floor_cpu,
        "ok": report.ok,
        "floor": floor,
        "sentences": len(sentences),
        "floor_tokens": sum(count_tokens(s) for s in sentences),
        "stage_seconds": stage_seconds,
        "embedded": counting.by_caller,
        "items": stage_items(workspace),
        "asked": asked_items(workspace),
        "settings": settings,
    }


def query_latencies(workspace: Workspace, questions_path: Path, settings) -> dict[str, list[float]]:
    """Per-question latency of each system, each in its own session (so neither system is served
    the other's query vectors)."""
    questions = load_questions(questions_path)
    found: dict[str, list[float]] = {}
    for system in ("nkw", "hybrid"):
        engine = QueryEngine(workspace, settings)
        for doc_id in {q.doc_id for q in questions}:
            warm_up(engine, doc_id)
        engine.ask(
            questions[0].doc_id, questions[0].question, questions[0].options, system
        )  # first-call lookups
        found[system], found[f"{system} cpu"] = [], []
        for question in questions:
            started, cpu_started = time.perf_counter(), time.process_time()
            engine.ask(question.doc_id, question.question, question.options, system)
            found[system].append((time.perf_counter() - started) * 1000)
            found[f"{system} cpu"].append((time.process_time() - cpu_started) * 1000)
    return found


def ask_startup(workspace: Workspace, doc_id: str, question: str) -> tuple[float, float, str]:
    """(process wall seconds, answer latency seconds, the command's own start-up line) of one
    `nkw ask --json`, then of one plain `nkw ask` (which prints its start-up split on stderr)."""
    started = time.perf_counter()
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "flows.cli",
            "ask",
            "--workspace",
            str(workspace.root),
            "--doc",
            doc_id,
            question,
            "--json",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    wall = time.perf_counter() - started
    if process.returncode != 0:
        sys.exit(f"nkw ask failed: {process.stderr[-800:]}")
    plain = subprocess.run(
        [sys.executable, "-m", "flows.cli", "ask", "-w", str(workspace.root), "--doc", doc_id, question],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    split = next((line for line in plain.stderr.splitlines() if line.startswith("start-up")), "")
    return wall, json.loads(process.stdout).get("latency_ms", 0.0) / 1000, split


def print_llm(llm: dict, offline: dict, latency: float, concurrency: int) -> None:
    calls, source = llm["calls"], llm["source_tokens"]
    print(
        f"\n[1] LLM prompt tokens / source tokens ({source:,} source tokens; test server; "
        f"build {llm['wall']:.1f} s, "
        f"ok={llm['ok']})"
    )
    print(
        f"  {'stage':<22} {'calls':>6} {'prompt tok':>11} {'/ source':>9} {'items llm':>9} {'items off':>9} "
        f"{'projected / source':>19}"
    )
    total = projected_total = 0.0
    calls_total = 0
    for stage in LLM_STAGES + DOWNSTREAM_STAGES:
        if stage == DOWNSTREAM_STAGES[0]:
            print(
                f"  {'construction total':<22} {calls_total:>6} {total:>11,.0f} {total / source:>9.2f} "
                f"{'':>9} {'':>9} {projected_total / source:>19.2f}"
            )
        group = calls[calls["stage"] == stage]
        prompt = float(group["prompt_tokens"].sum())
        items_llm, items_off = llm["items"].get(stage, 0), offline["items"].get(stage, 0)
        projected = prompt / items_llm * items_off if items_llm else prompt
        total += prompt
        projected_total += projected
        calls_total += len(group)
        print(
            f"  {stage:<22} {len(group):>6} {prompt:>11,.0f} {prompt / source:>9.2f} "
            f"{items_llm:>9} {items_off:>9} "
            f"{projected / source:>19.2f}"
        )
    print(
        f"  {'total with downstream':<22} {len(calls):>6} {total:>11,.0f} {total / source:>9.2f} {'':>9} "
        f"{'':>9} {projected_total / source:>19.2f}"
    )
    arrivals = llm["arrivals"]
    window = arrivals[-1] + latency - arrivals[0] if arrivals else 0.0
    achieved = len(arrivals) * latency / window if window else 0.0
    print(
        f"\n[2] concurrency: {len(arrivals)} requests at {latency * 1000:.0f} ms, "
        f"{concurrency} in flight; first request to "
        f"last reply {window:.1f} s; achieved {achieved:.1f} / configured {concurrency} = "
        f"{achieved / concurrency:.2f}"
    )
    idle, busy_until = 0.0, None
    for arrived in arrivals:
        if busy_until is not None and arrived > busy_until:
            idle += arrived - busy_until
        busy_until = max(busy_until or arrived, arrived + latency)
    print(
        f"  server idle (no request in flight) {idle:.1f} s of the window; while busy "
        f"{len(arrivals) * latency / max(1e-9, window - idle):.1f} in flight on average"
    )
    print(
        "\n[3] --dry-run estimate (from the offline build's items) vs actual, per stage (calls; prompt "
        "tokens). The items differ: 'asked' counts what each stage puts into its requests in either "
        "build; 'at offline' re-packs the offline build's asked items as densely as the test-server "
        "build packed its own (calls = ceil(asked off / asked per request)) and scales its prompt "
        "tokens per asked item"
    )
    print(
        f"  {'stage':<22} {'asked':>6} {'off':>5} {'est calls':>9} {'calls':>6} {'ratio':>6} {'at off':>6} "
        f"{'ratio':>6} {'est prompt':>11} {'prompt':>10} {'ratio':>6} {'at offline':>10} {'ratio':>6}"
    )
    totals = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for stage in LLM_STAGES + DOWNSTREAM_STAGES:
        row = llm["estimate"].get(stage) or {}
        group = calls[calls["stage"] == stage]
        est_calls, est_prompt = row.get("calls") or 0, row.get("prompt_tokens") or 0
        actual_prompt = int(group["prompt_tokens"].sum())
        asked_llm, asked_off = llm["asked"].get(stage), offline["asked"].get(stage)
        if asked_llm is None:  # packed by chunks: the same chunks in both builds
            asked_llm = asked_off = llm["items"].get(stage, 0)
        per_request = asked_llm / len(group) if len(group) else 0.0
        at_calls = math.ceil(asked_off / per_request - 1e-9) if per_request else 0
        at_prompt = actual_prompt * asked_off / asked_llm if asked_llm else 0.0
        totals = [
            totals[0] + est_calls,
            totals[1] + len(group),
            totals[2] + at_calls,
            totals[3] + est_prompt,
            totals[4] + actual_prompt,
            totals[5] + at_prompt,
        ]
        print(
            f"  {stage:<22} {asked_llm:>6} {asked_off:>5} {est_calls:>9} {len(group):>6} "
            f"{est_calls / max(1, len(group)):>6.2f} {at_calls:>6} {est_calls / max(1, at_calls):>6.2f} "
            f"{est_prompt:>11,} {actual_prompt:>10,} {est_prompt / max(1, actual_prompt):>6.2f} "
            f"{at_prompt:>10,.0f} {est_prompt / max(1, at_prompt):>6.2f}"
        )
    print(
        f"  {'total':<22} {'':>6} {'':>5} {totals[0]:>9.0f} {totals[1]:>6.0f} "
        f"{totals[0] / max(1, totals[1]):>6.2f} {totals[2]:>6.0f} {totals[0] / max(1, totals[2]):>6.2f} "
        f"{totals[3]:>11,.0f} {totals[4]:>10,.0f} {totals[3] / max(1, totals[4]):>6.2f} "
        f"{totals[5]:>10,.0f} {totals[3] / max(1, totals[5]):>6.2f}"
    )
    print(
        "\n[3b] --dry-run over the LLM build's own workspace (its items) vs that build's calls "
        "and prompt tokens"
    )
    print(
        f"  {'stage':<22} {'est calls':>9} {'calls':>6} {'ratio':>6} {'est prompt':>11} {'prompt':>10} "
        f"{'ratio':>6}"
    )
    sums = [0, 0, 0, 0]
    for stage in LLM_STAGES + DOWNSTREAM_STAGES:
        row = llm["rebuild"].get(stage) or {}
        group = calls[calls["stage"] == stage]
        est_calls, est_prompt = row.get("calls") or 0, row.get("prompt_tokens") or 0
        actual_prompt = int(group["prompt_tokens"].sum())
        sums = [sums[0] + est_calls, sums[1] + len(group), sums[2] + est_prompt, sums[3] + actual_prompt]
        print(
            f"  {stage:<22} {est_calls:>9} {len(group):>6} {est_calls / max(1, len(group)):>6.2f} "
            f"{est_prompt:>11,} {actual_prompt:>10,} {est_prompt / max(1, actual_prompt):>6.2f}"
        )
    print(
        f"  {'total':<22} {sums[0]:>9} {sums[1]:>6} {sums[0] / max(1, sums[1]):>6.2f} "
        f"{sums[2]:>11,} {sums[3]:>10,} {sums[2] / max(1, sums[3]):>6.2f}"
    )
    if llm.get("cost") is not None:
        actual = int(calls["prompt_tokens"].sum() + calls["completion_tokens"].sum())
        print(
            f"  cost at {PRICE_PER_MILLION} per million tokens: estimated {llm['cost']:.2f}, "
            f"actual {actual / 1e6 * PRICE_PER_MILLION:.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--doc-title", default="Birthday Girl")
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument(
        "--embeddings", default=None, help="embedding backend of the offline build (e.g. hashing: fast)"
    )
    parser.add_argument(
        "--chunk-vectors",
        choices=["embedded", "sentences"],
        default=None,
        help="[embed_texts] chunk_vectors of the offline build (default: the setting's default)",
    )
    parser.add_argument(
        "--hierarchy-vectors",
        choices=["derived", "embedded"],
        default=None,
        help="[embed_assets] hierarchy_vectors of the offline build (default: the setting's default)",
    )
    parser.add_argument(
        "--quoting-vectors",
        choices=["derived", "embedded"],
        default=None,
        help="embedded: [embed_assets] grounded_vectors, [assemble_episodes] unit_vectors and "
        "[relate_episodes] episode_vectors set to embed whole texts (default: the settings' defaults)",
    )
    parser.add_argument("--llm-only", action="store_true", help="rows 1-3 only (no query or ask timings)")
    parser.add_argument(
        "--offline-only", action="store_true", help="rows 4-6 only (no test-server build; rows 1-3 skipped)"
    )
    args = parser.parse_args()
    if not (STAGE / "documents.jsonl").exists():
        sys.exit(f"the STAGE dev set is not beside the clone ({STAGE.relative_to(REPO.parent)})")
    os.environ.setdefault("DO_NOT_TRACK", "1")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")  # as the CLI sets it
    bench_started = time.perf_counter()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        doc_path, doc_id, questions_path = write_inputs(folder, args.doc_title)
        offline = offline_build(
            doc_path,
            folder,
            args.embeddings,
            args.chunk_vectors,
            args.hierarchy_vectors,
            args.quoting_vectors,
        )
        llm = (
            None
            if args.offline_only
            else llm_build(doc_path, folder, args.latency, args.concurrency, offline["workspace"])
        )
        if args.llm_only and llm is not None:
            print(f"document: {args.doc_title} ({doc_id}); offline embeddings {args.embeddings or 'default'}")
            print_llm(llm, offline, args.latency, args.concurrency)
            return
        latencies = query_latencies(offline["workspace"], questions_path, offline["settings"])
        first_question = load_questions(questions_path)[0].question
        ask_wall, ask_answer, ask_split = ask_startup(offline["workspace"], doc_id, first_question)
    threads = os.environ.get("OMP_WAIT_POLICY", "(unset)")
    print(f"document: {args.doc_title} ({doc_id}); OMP_WAIT_POLICY={threads}; cores {os.cpu_count()}")
    if llm is not None:
        print_llm(llm, offline, args.latency, args.concurrency)
    wall, floor, server = offline["wall"], offline["floor"], offline["server_start"]
    embedding = sum(seconds for _, _, seconds in offline["embedded"].values())
    print(
        f"\n[4] offline build (MiniLM, chunk vectors "
        f"{getattr(offline['settings'].embed_texts, 'chunk_vectors', 'embedded')}, episode vectors "
        f"{getattr(getattr(offline['settings'], 'embed_assets', None), 'hierarchy_vectors', 'embedded')}, "
        f"quoting texts {getattr(offline['settings'].embed_assets, 'grounded_vectors', 'embedded')}, "
        f"Prefect task runs, model loaded, Prefect server up): {wall:.1f} s, "
        f"ok={offline['ok']}; embedding "
        f"floor ({offline['sentences']:,} sentences, {offline['floor_tokens']:,} tokens) "
        f"{floor:.1f} s; "
        f"ratio {wall / floor:.2f}"
    )
    print(
        f"  Prefect's temporary server started before the build in {server:.1f} s "
        f"(with it: {wall + server:.1f} s, ratio {(wall + server) / floor:.2f}); "
        f"the build embedded for {embedding:.1f} s and spent {wall - embedding:.1f} s on the rest"
    )
    print(
        f"  process CPU time (this process; less swayed by other load): build {offline['cpu']:.1f} s "
        f"÷ floor {offline['floor_cpu']:.1f} s = {offline['cpu'] / max(offline['floor_cpu'], 1e-9):.2f}"
    )
    slow = sorted(offline["stage_seconds"].items(), key=lambda kv: -kv[1])[:6]
    print("  slowest stages: " + ", ".join(f"{k} {v:.1f} s" for k, v in slow))
    for caller, (texts, tokens, seconds) in sorted(offline["embedded"].items(), key=lambda kv: -kv[1][2]):
        print(f"  embedded by {caller}: {texts:,.0f} texts, {tokens:,.0f} tokens, {seconds:.1f} s")
    print(f"\n[5] offline answer latency over {len(latencies['nkw'])} questions (model and bundle loaded)")
    for system in ("nkw", "hybrid"):
        array, cpu = np.array(latencies[system]), np.array(latencies[f"{system} cpu"])
        print(
            f"  {system:<7} p50 {np.percentile(array, 50):7.1f} ms   p95 {np.percentile(array, 95):7.1f} ms"
            f"   process CPU time p50 {np.percentile(cpu, 50):7.1f} ms"
        )
    print(
        f"\n[6] nkw ask: process {ask_wall:.2f} s = start-up {ask_wall - ask_answer:.2f} s "
        f"+ answer {ask_answer:.2f} s"
    )
    print(f"  a second, plain `nkw ask` reports: {ask_split or '(no start-up line)'}")
    load_after = os.getloadavg()
    print(
        f"\nbenchmark wall time {time.perf_counter() - bench_started:.0f} s; load average (1 min) "
        f"{load_before[0]:.1f} at start, {load_after[0]:.1f} at end"
    )


if __name__ == "__main__":
    main()
