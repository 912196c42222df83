"""The real-model benchmark's accounting per stage, on a few llm_calls and failures rows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pandas as pd

BENCH = Path(__file__).resolve().parents[3] / "benchmarks" / "bench_real_llm.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_real_llm", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_requests_answered_repaired_failed_and_truncated_per_stage():
    calls = pd.DataFrame(
        [
            # a: cut at its limit, then answered by the length retry (repaired)
            ("extract_graph", "a", 0, "truncated", "length", 100, 50),
            ("extract_graph", "a", 1, "ok", "stop", 100, 80),
            # b: answered at once; c: timed out twice (a failures row)
            ("extract_graph", "b+2", 0, "ok", "stop", 200, 40),
            ("extract_graph", "c", 0, "timeout", None, None, None),
            ("extract_graph", "c", 1, "timeout", None, None, None),
            # d: left out of a batched reply, answered when asked again (repaired); e: from the cache
            ("assemble_episodes", "d", 0, "invalid", "stop", 50, 10),
            ("assemble_episodes", "d#again", 0, "ok", "stop", 50, 10),
            ("assemble_episodes", "e", 0, "cached", "stop", 30, 5),
        ],
        columns=[
            "stage",
            "item_id",
            "attempt",
            "status",
            "finish_reason",
            "prompt_tokens",
            "completion_tokens",
        ],
    )
    failures = pd.DataFrame([("extract_graph", "c", "llm timeout")], columns=["stage", "item_id", "error"])
    rows = {r["stage"]: r for r in _bench().stage_figures(calls, failures, 100, {"extract_graph": 12.0})}
    graph, episodes = rows["extract_graph"], rows["assemble_episodes"]
    assert (graph["requests"], graph["answered"], graph["repaired"], graph["failed"], graph["truncated"]) == (
        5, 2, 1, 1, 1,
    )  # fmt: skip
    assert (
        graph["prompt_per_source"] == 4.0
        and graph["completion_per_source"] == 1.7
        and graph["seconds"] == 12.0
    )
    # the cached reply is no request sent; d is repaired by its second asking
    assert (episodes["requests"], episodes["answered"], episodes["repaired"], episodes["failed"]) == (
        2,
        2,
        1,
        0,
    )
