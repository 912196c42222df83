"""The report's build costs: a row per build that asked a model, read from the build stages'
llm_calls partitions only (an evaluation run's answering calls are not the build's), per token of
the chunks' text; an offline build has none."""

from __future__ import annotations

from flows.inspection.build_costs import build_call_files, build_costs
from tasks.tables.io import Workspace, write_table


def _call(stage: str, item: str, prompt: int, cached: int | None, completion: int) -> dict:
    return {
        "call_key": f"k-{stage}-{item}", "attempt": 1, "doc_id": "d1", "stage": stage, "item_id": item,
        "model": "m-0.5b", "prompt_tokens": prompt, "cached_prompt_tokens": cached,
        "completion_tokens": completion, "status": "ok", "prompt_id": None, "prompt_version": None,
        "prompt_hash": None, "latency_ms": 1.0, "finish_reason": "stop", "error": None,
    }  # fmt: skip


def _chunk(ordinal: int, n_tokens: int) -> dict:
    return {
        "chunk_id": f"c{ordinal}", "doc_id": "d1", "section_id": "s1", "ordinal": ordinal, "text": "x",
        "char_start": ordinal, "char_end": ordinal + 1, "n_tokens": n_tokens,
    }  # fmt: skip


def test_a_row_per_build_that_asked_a_model(tmp_path) -> None:
    base, variant = Workspace.at(tmp_path / "ws"), Workspace.at(tmp_path / "ws" / "variants" / "saber_raw")
    for workspace in (base, variant):
        write_table(workspace, "chunks", [_chunk(0, 150), _chunk(1, 50)], "d1")
    write_table(base, "llm_calls", [_call("extract_graph", "c0", 900, 0, 300)], "d1", "extract_graph")
    write_table(base, "llm_calls", [_call("relate_episodes", "p0", 700, 600, 100)], "d1", "relate_episodes")
    # an evaluation run's answering calls: not the build's
    write_table(base, "llm_calls", [_call("answer", "q1", 5000, None, 50)], "d1", "answer-run_0123abcd")
    assert sorted(p.stem for p in build_call_files(base)) == ["d1__extract_graph", "d1__relate_episodes"]

    costs = build_costs([base, variant])  # the variant's build asked nothing: no row
    assert costs.to_dict("records") == [
        {
            "build": "base · m-0.5b", "source_tokens": 200, "requests": 2, "cache_reported": 2,
            "prompt_per_source": 8.0, "computed_per_source": 5.0, "completion_per_source": 2.0,
        }
    ]  # fmt: skip
    assert build_costs([variant]).empty
