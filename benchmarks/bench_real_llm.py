"""The LLM path against a real model on this machine: llama.cpp serving a GGUF model (`nkw llm local`).

Builds the given documents offline and through every LLM stage (started and stopped here: the
pinned model is fetched or reused from the cache), then prints per stage: requests (attempts sent),
items answered, repaired (answered after a failed attempt or a second asking), failed (`failures`
rows), length-truncated attempts, salvaged ones (cut, their complete items kept), prompt and
completion tokens per source token, the stage's wall seconds, and its rows beside the offline
build's; then the whole build's tokens per source token.
With `--questions`, N questions are answered through the agent by the same model (NKW and the hybrid
baseline) and judged by it, beside the offline answers: Overall and latency. With `--query-only` the
documents are built offline only (too long to build through a small model here) and the model answers
and judges over that build: the query-time figures of a dev slice.

Both builds and the evaluations run as a user runs them (`nkw build ... --no-prefect --json`),
with the settings of `--config` (default: the real-model check's, tests/real_llm/check_llm.toml).

    python benchmarks/bench_real_llm.py [PATH ...] [--model 0.5b|1.5b|FILE.gguf] [--config TOML]
        [--questions FILE --limit N --systems nkw,hybrid [--query-only]] [--out DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from schemas.config import load_settings  # noqa: E402
from tasks.llm.client.token_costs import computed_prompt_tokens  # noqa: E402
from tasks.llm.local.model_files import default_cache_dir, resolve_model  # noqa: E402
from tasks.llm.local.server import LocalServer, ServerOptions, free_port  # noqa: E402
from tasks.tables.io import Workspace, read_frame  # noqa: E402

FIXTURE = REPO / "tests" / "fixtures" / "real_llm" / "the_ferry_ticket.txt"
CHECK_CONFIG = REPO / "tests" / "real_llm" / "check_llm.toml"
DONE = ("ok", "cached", "salvaged")  # salvaged: cut at its limit, its complete items kept


def nkw(*args: str) -> tuple[subprocess.CompletedProcess, float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "flows.cli.main", *args], cwd=REPO, capture_output=True, text=True
    )
    return done, time.monotonic() - started


def stage_figures(
    calls: pd.DataFrame, failures: pd.DataFrame, source_tokens: int, seconds: dict[str, float]
) -> list[dict[str, Any]]:
    """One row per stage that asked the model: the accounting of llm_calls and failures per source token."""
    rows = []
    calls = calls.assign(item=calls["item_id"].str.replace(r"(#again)?(\+\d+)?$", "", regex=True))
    for stage, group in calls.groupby("stage", sort=False):
        items = group.groupby("item")
        answered = items["status"].agg(lambda s: s.isin(DONE).any())
        first_failed = items.apply(
            lambda g: g.sort_values("attempt", kind="stable")["status"].iloc[0] not in DONE
        )
        sent = group[group["status"] != "cached"]
        rows.append(
            {
                "stage": stage,
                "requests": len(sent),
                "answered": int(answered.sum()),
                "repaired": int((answered & first_failed).sum()),
                "failed": int((failures["stage"] == stage).sum()) if not failures.empty else 0,
                "truncated": int((group["finish_reason"] == "length").sum()),
                "salvaged": int((group["status"] == "salvaged").sum()),
                "prompt_per_source": round(group["prompt_tokens"].fillna(0).sum() / max(source_tokens, 1), 2),
                "computed_per_source": round(computed_prompt_tokens(group) / max(source_tokens, 1), 2),
                "completion_per_source": round(
                    group["completion_tokens"].fillna(0).sum() / max(source_tokens, 1), 2
                ),
                "seconds": round(seconds.get(stage, 0.0), 1),
            }
        )
    return rows


def measure_speed(url: str, alias: str, text: str, rounds: int = 2) -> dict[str, float]:
    """The model's own prompt and decode speed on this machine, from llama.cpp's `timings` of plain
    requests (a fresh prefix each round, so nothing comes from the cache; one request at a time): the
    denominators of the build's floor. The median of `rounds`."""
    prompt_speeds, decode_speeds = [], []
    for round_no in range(rounds):
        fresh = f"Round {round_no} {time.time_ns()}. Retell this story at length:\n{text}"
        body = {
            "model": alias,
            "messages": [{"role": "user", "content": fresh}],
            "max_tokens": 256, "temperature": 0.0, "cache_prompt": False,
        }  # fmt: skip
        reply = httpx.post(f"{url}/chat/completions", json=body, timeout=900)
        reply.raise_for_status()
        timings = reply.json().get("timings") or {}
        prompt_speeds.append(float(timings.get("prompt_per_second") or 0.0))
        decode_speeds.append(float(timings.get("predicted_per_second") or 0.0))
    return {
        "prompt_tokens_per_s": round(statistics.median(prompt_speeds), 1),
        "decode_tokens_per_s": round(statistics.median(decode_speeds), 2),
    }


def floor_seconds(calls: pd.DataFrame, speed: dict[str, float]) -> float:
    """The build's floor: computed prompt tokens at the prompt speed plus completion tokens at the
    decode speed, as if the model did nothing else and one request at a time."""
    sent = calls[calls["status"] != "cached"]
    prompt_s = computed_prompt_tokens(sent) / max(speed["prompt_tokens_per_s"], 1e-9)
    decode_s = float(sent["completion_tokens"].fillna(0).sum()) / max(speed["decode_tokens_per_s"], 1e-9)
    return round(prompt_s + decode_s, 1)


def stage_rows(report: dict[str, Any]) -> tuple[dict[str, int], dict[str, float], dict[str, str]]:
    """Rows, wall seconds and status per stage, summed over the report's documents."""
    rows: dict[str, int] = {}
    seconds: dict[str, float] = {}
    status: dict[str, str] = {}
    for document in report.get("documents", []):
        for stage in document["stages"]:
            name = stage["stage"]
            rows[name] = rows.get(name, 0) + sum((stage.get("rows") or {}).values())
            seconds[name] = seconds.get(name, 0.0) + float(stage.get("seconds") or 0.0)
            status[name] = stage["status"] if status.get(name, "built") == "built" else status[name]
    return rows, seconds, status


def build(paths: list[str], root: Path, config: Path, llm: list[str]) -> dict[str, Any]:
    done, wall = nkw(
        "build", *paths, "-w", str(root), "--no-prefect", "--json", "--config", str(config), *llm
    )
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"build failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return {"exit": done.returncode, "wall_s": round(wall, 1), "report": json.loads(done.stdout)}


def evaluate(root: Path, questions: Path, limit: int, system: str, config: Path, llm: list[str]) -> dict:
    done, wall = nkw(
        "eval", "-w", str(root), "--questions", str(questions), "--limit", str(limit), "--system", system,
        "--no-prefect", "--json", "--fresh", "--config", str(config), *llm,
    )  # fmt: skip
    if done.returncode != 0:
        return {"system": system, "error": done.stderr.strip()[-400:], "wall_s": round(wall, 1)}
    report = json.loads(done.stdout)
    answers = read_frame(Workspace.at(root), "qa_answers")
    answers = answers[answers["run_id"] == report["run_id"]]
    overall = report["metrics"].get("overall", report["metrics"])
    return {
        "system": system,
        "offline": report["offline"],
        "n": report["n_questions"],
        "metrics": overall,
        "protocol": report.get("protocol", {}),  # Overall (judged or option match) and judge agreement
        "latency_ms_median": round(float(answers["latency_ms"].median()), 0) if len(answers) else None,
        "latency_ms_max": round(float(answers["latency_ms"].max()), 0) if len(answers) else None,
        "wall_s": round(wall, 1),
    }


def source_tokens(workspace: Workspace) -> int:
    return int(read_frame(workspace, "chunks", columns=["n_tokens"])["n_tokens"].sum())


def print_build(figures: list[dict], llm_rows: dict, offline_rows: dict, status: dict, total: dict) -> None:
    head = ["stage", "requests", "answered", "repaired", "failed", "truncated", "salvaged",
            "prompt_per_source", "computed_per_source", "completion_per_source", "seconds"]  # fmt: skip
    print(" ".join(f"{h:>12}" for h in head + ["rows", "rows_offline", "status"]))
    for row in figures:
        cells = [row[h] for h in head] + [llm_rows.get(row["stage"], 0), offline_rows.get(row["stage"], 0)]
        print(" ".join(f"{c!s:>12}" for c in cells + [status.get(row["stage"], "")]))
    print(
        f"whole build: {total['source_tokens']} source tokens, {total['prompt_per_source']} prompt "
        f"({total['computed_per_source']} computed, the rest from the server's prefix cache) and "
        f"{total['completion_per_source']} completion tokens per source token, {total['requests']} requests, "
        f"wall {total['wall_s']} s (offline {total['offline_wall_s']} s), exit {total['exit']}"
    )
    ratio = total["wall_s"] / max(total["floor_s"], 1e-9)
    print(
        f"the model's floor: {total['floor_s']} s (computed prompt tokens at {total['prompt_tokens_per_s']} "
        f"tokens/s, completion tokens at {total['decode_tokens_per_s']} tokens/s); wall / floor {ratio:.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=[str(FIXTURE)])
    parser.add_argument("--model", default="0.5b", help="pinned model key or a GGUF file")
    parser.add_argument("--cache-dir", help="model cache (default $NKW_MODEL_CACHE or ~/.cache/nkw/models)")
    parser.add_argument("--config", default=str(CHECK_CONFIG), help="settings of both builds and the server")
    parser.add_argument("--questions", help="questions.jsonl (benchmark format) for the query-time part")
    parser.add_argument("--limit", type=int, default=5, help="questions answered per system")
    parser.add_argument("--systems", default="nkw,hybrid")
    parser.add_argument(
        "--query-only", action="store_true", help="build offline only; the model answers and judges over it"
    )
    parser.add_argument("--out", help="folder for the workspaces (default: a temporary one)")
    parser.add_argument("--json", help="also write every figure to this JSON file")
    args = parser.parse_args()

    config = Path(args.config)
    settings = load_settings(config).local_llm
    cache = Path(args.cache_dir or os.environ.get("NKW_MODEL_CACHE") or default_cache_dir())
    model = resolve_model(args.model, cache, log=lambda line: print(line, file=sys.stderr))
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench-real-llm-"))
    offline_root, llm_root = out / "offline", out / "llm"
    results: dict[str, Any] = {"model": model.alias, "documents": args.paths, "config": str(config)}

    offline = build(args.paths, offline_root, config, [])
    options = ServerOptions(
        model_path=str(model.path), alias=model.alias, context=settings.context, parallel=settings.parallel,
        decode_threads=settings.decode_threads, prompt_threads=settings.prompt_threads, port=free_port(),
    )  # fmt: skip
    started = time.monotonic()
    with LocalServer(options, settings.startup_timeout_s) as server:
        results["server_start_s"] = round(time.monotonic() - started, 1)
        llm_args = ["--llm-url", server.url, "--model", model.alias]
        if args.query_only:
            results["query"] = answer_questions(args, offline_root, offline_root, config, llm_args)
            return finish(args, results)
        sample = Path(args.paths[0]).read_text(encoding="utf-8", errors="replace")[:4000]
        speed = measure_speed(server.url, model.alias, sample)
        print(f"measured: {speed['prompt_tokens_per_s']} prompt and {speed['decode_tokens_per_s']} "
              "decode tokens/s", flush=True)  # fmt: skip
        real = build(args.paths, llm_root, config, llm_args)
        workspace = Workspace.at(llm_root)
        calls, failures = read_frame(workspace, "llm_calls"), read_frame(workspace, "failures")
        tokens = source_tokens(workspace)
        llm_rows, seconds, status = stage_rows(real["report"])
        offline_rows, _, _ = stage_rows(offline["report"])
        figures = stage_figures(calls, failures, tokens, seconds)
        total = {
            "source_tokens": tokens,
            "requests": int((calls["status"] != "cached").sum()),
            "prompt_per_source": round(calls["prompt_tokens"].fillna(0).sum() / max(tokens, 1), 2),
            "computed_per_source": round(computed_prompt_tokens(calls) / max(tokens, 1), 2),
            "completion_per_source": round(calls["completion_tokens"].fillna(0).sum() / max(tokens, 1), 2),
            "wall_s": real["wall_s"],
            "floor_s": floor_seconds(calls, speed),
            **speed,
            "offline_wall_s": offline["wall_s"],
            "exit": real["exit"],
        }
        print_build(figures, llm_rows, offline_rows, status, total)
        results.update(stages=figures, rows=llm_rows, rows_offline=offline_rows, status=status, total=total)
        results["failure_reasons"] = failures["error"].str.slice(0, 160).value_counts().head(12).to_dict()
        for reason, count in results["failure_reasons"].items():
            print(f"  failure x{count}: {reason}")
        if args.questions:
            results["query"] = answer_questions(args, llm_root, offline_root, config, llm_args)
    return finish(args, results)


def answer_questions(
    args: argparse.Namespace, llm_root: Path, offline_root: Path, config: Path, llm_args: list[str]
) -> list[dict[str, Any]]:
    """Each system answers over the model's build with the model, and over the offline build offline."""
    rows = []
    for system in args.systems.split(","):
        for root, llm in ((llm_root, llm_args), (offline_root, [])):
            row = evaluate(root, Path(args.questions), args.limit, system, config, llm)
            rows.append(row)
            print(f"query {system} {'llm' if llm else 'offline'}: {json.dumps(row)}", flush=True)
    return rows


def finish(args: argparse.Namespace, results: dict[str, Any]) -> int:
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
