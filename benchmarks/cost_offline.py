"""Rows 4-6 of the cost benchmark: an offline build of one document against its embedding floor
(the document's sentences embedded once by the same loaded model, in the same process), offline
answer latency, and `nkw ask` start-up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402

from cost_llm import asked_items, stage_items  # noqa: E402
from flows.answer_questions import QueryEngine, warm_up  # noqa: E402
from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from flows.build.corpus import make_resources  # noqa: E402
from flows.evaluation.question_file import load_questions  # noqa: E402
from flows.prefect_server import reap_with_this_process  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.embeddings import build_embedder  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402
from tasks.tables.manifest import list_manifests  # noqa: E402
from tasks.text import count_tokens  # noqa: E402

TASKS = str(REPO / "tasks") + os.sep  # stage modules: the build's embedding calls are counted per stage


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
    `nkw ask --json`, then of one plain `nkw ask -v` (which prints its start-up split on stderr)."""
    started = time.perf_counter()
    process = subprocess.run(
        [
            sys.executable,
            "-m",
            "flows.cli.main",
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
        [
            sys.executable,
            "-m",
            "flows.cli.main",
            "ask",
            "-w",
            str(workspace.root),
            "--doc",
            doc_id,
            question,
            "-v",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    split = next((line for line in plain.stderr.splitlines() if line.startswith("start-up")), "")
    return wall, json.loads(process.stdout).get("latency_ms", 0.0) / 1000, split


def print_offline(offline: dict, latencies: dict, ask_wall: float, ask_answer: float, ask_split: str) -> None:
    wall, floor, server = offline["wall"], offline["floor"], offline["server_start"]
    embedding = sum(seconds for _, _, seconds in offline["embedded"].values())
    print(
        f"\n[4] offline build ({offline['settings'].embed_texts.backend} embeddings, chunk vectors "
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
