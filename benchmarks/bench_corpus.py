"""Corpus benchmark: the STAGE release's screenplays (`stage-corpus/`, 131 documents, 95 English and
36 Chinese) built through Prefect with every stage, as a user rebuilding the corpus would.

Prints the wall time, the seconds per document of the first and last twenty documents (flat means
the build does not slow down as the corpus grows), the peak RSS of every process of the run (this
one, Prefect's server, any worker), Prefect's own share of the time (document wall time minus the
time spent inside its stages, plus the flow's fixed start-up cost), the CPU seconds (what the run
costs on a machine shared with other work) and the failed stages.

    python benchmarks/bench_corpus.py [--documents N] [--embeddings minilm|hashing] [--concurrency 2]
                                      [--runner thread|process] [--corpus PATH] [--workspace DIR]

A progress line per finished document and a heartbeat per minute go to stderr, so a run cut short
still tells how many documents were done and at what rate.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from flows.build_corpus import build_with_prefect as build  # noqa: E402  (documents as Prefect task runs)
from flows.cli.main import prefect_environment  # noqa: E402
from schemas.config import load_settings  # noqa: E402
from tasks.tables.io import Workspace  # noqa: E402

SHARED = Path(os.environ.get("NKW_SHARED_DATA", REPO.parent / "shared" / "data"))
EDGE = 20  # documents compared at the start and the end of the run


def _status_kb(pid: int, field: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as status:
            for line in status:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as children:
            return [int(p) for p in children.read().split()]
    except OSError:
        return []


def _name(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = [w.decode(errors="replace") for w in cmdline.read().split(b"\0") if w]
    except OSError:
        return "?"
    text = " ".join(words)
    if "prefect" in text and "server" in text:
        return "prefect server"
    return text[:80] or "?"


class Watch:
    """Every process of the run (this one and its descendants), sampled each second: the kernel's
    high-water mark of each (VmHWM, so a peak between samples is not missed while it lives)."""

    def __init__(self) -> None:
        self.peaks: dict[int, tuple[str, int]] = {}
        self.started = time.perf_counter()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _sample(self) -> None:
        todo = [os.getpid()]
        while todo:
            pid = todo.pop()
            todo.extend(_children(pid))
            peak = _status_kb(pid, "VmHWM")
            if peak:
                name = "build (this process)" if pid == os.getpid() else _name(pid)
                previous = self.peaks.get(pid, (name, 0))[1]
                self.peaks[pid] = (name, max(previous, peak))

    def _run(self) -> None:
        last_beat = time.perf_counter()
        while not self._stop.wait(1.0):
            self._sample()
            if time.perf_counter() - last_beat >= 60:
                last_beat = time.perf_counter()
                rss = sum(_status_kb(pid, "VmRSS") for pid in self.peaks) / 1024
                print(
                    f"[heartbeat] {time.perf_counter() - self.started:7.0f}s  rss now {rss:6.0f} MB "
                    f"across {len(self.peaks)} process(es)",
                    file=sys.stderr,
                    flush=True,
                )

    def __enter__(self) -> Watch:
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()


def write_corpus(source: Path, target: Path, documents: int | None) -> tuple[int, dict[str, int]]:
    """The first `documents` records of the corpus file (all when None), as they are."""
    lines = [line for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = lines[:documents] if documents else lines
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    languages: dict[str, int] = {}
    for line in lines:
        language = json.loads(line)["language"]
        languages[language] = languages.get(language, 0) + 1
    return sum(len(line.encode("utf-8")) + 1 for line in lines), languages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=None, help="only the first N documents")
    parser.add_argument("--embeddings", choices=["minilm", "hashing"], default="minilm")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--corpus", default=str(SHARED / "stage-corpus" / "documents.jsonl"))
    parser.add_argument("--runner", choices=["thread", "process"], default="thread")
    parser.add_argument("--workspace", default=None, help="keep the workspace here (default: a temp dir)")
    args = parser.parse_args()
    prefect_environment()
    settings = load_settings(
        overrides={"embed_texts": {"backend": args.embeddings}, "build": {"concurrency": args.concurrency}}
    )
    with tempfile.TemporaryDirectory() as folder:
        corpus = Path(folder) / "documents.jsonl"
        size, languages = write_corpus(Path(args.corpus), corpus, args.documents)
        workspace = Workspace.at(Path(args.workspace) if args.workspace else Path(folder) / "ws")
        with Watch() as watch:
            started = time.perf_counter()
            report = build([str(corpus)], workspace, settings, quiet=False, runner=args.runner)
            wall = time.perf_counter() - started
    docs = report.documents  # input order, which is also the order they were submitted in
    per_doc = [d.seconds for d in docs]
    stage_seconds = [sum(o.seconds for o in d.outcomes) for d in docs]
    in_task = [max(0.0, total - inside) for total, inside in zip(per_doc, stage_seconds)]
    flow_wall = wall - report.plan_seconds
    # What the documents' own wall time cannot explain at this concurrency: server start, flow and
    # task scheduling, result collection.
    fixed = max(0.0, flow_wall - sum(per_doc) / args.concurrency)
    overhead = sum(in_task) + fixed * args.concurrency
    first, last = statistics.mean(per_doc[:EDGE]), statistics.mean(per_doc[-EDGE:])
    failures = [f"{d.doc_id} {o.stage}: {o.error}" for d in docs for o in d.outcomes if o.status == "failed"]
    peaks = sorted(watch.peaks.items(), key=lambda item: -item[1][1])
    # CPU time is what the run costs whatever else the machine is doing; wall time is not.
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    cpu = sum(u.ru_utime + u.ru_stime for u in usage)
    figures = {
        "documents": len(docs),
        "languages": languages,
        "input_mb": round(size / 1e6, 2),
        "embeddings": args.embeddings,
        "concurrency": args.concurrency,
        "runner": args.runner,
        "ok": report.ok,
        "stage_runs": report.count("built"),
        "failed": report.count("failed"),
        "failures": failures,
        "wall_s": round(wall, 1),
        "wall_min": round(wall / 60, 1),
        "plan_s": round(report.plan_seconds, 2),
        "s_per_doc_mean": round(statistics.mean(per_doc), 1),
        "cpu_s": round(cpu),
        "cpu_s_per_doc": round(cpu / len(docs), 1),
        "load_average_1min_at_end": os.getloadavg()[0],
        f"s_per_doc_first{EDGE}": round(first, 1),
        f"s_per_doc_last{EDGE}": round(last, 1),
        f"last{EDGE}_vs_first{EDGE}": f"{(last / first - 1) * 100:+.1f}%",
        "peak_rss_mb_per_process": [
            {"pid": pid, "process": name, "peak_rss_mb": round(kb / 1024)} for pid, (name, kb) in peaks
        ],
        "peak_rss_mb_sum_of_peaks": round(sum(kb for _, (_, kb) in peaks) / 1024),
        "prefect_overhead_s_per_doc": round(overhead / len(docs), 2),
        "prefect_share_of_wall_pct": round(100 * overhead / args.concurrency / wall, 2),
        "prefect_in_task_s_per_doc": round(statistics.mean(in_task), 3),
        "prefect_fixed_s": round(fixed, 1),
    }
    print(json.dumps(figures, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
