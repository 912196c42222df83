"""A stage's outputs before they are committed: each table cast to its schema and its contracts
checked, and the LLM items the stage lost counted (or forgotten from the cache, for a retry)."""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

from flows.stages import Stage
from tasks.tables.contracts import ContractError, check_outputs
from tasks.tables.io import SchemaError, Workspace, read_frame, to_arrow

# Failures rows of items the LLM did not give a usable answer for: the server never answered
# (connection, HTTP 5xx/429, timeouts), or its reply was unusable (not the schema, `content: null`,
# truncated, refused, or an item a batched reply left out). The stage's output lacks them, so the
# stage is `partial`: the build says INCOMPLETE and exits non-zero, and the next build (or
# `--retry-failed`) runs the stage again. Validated replies come from the LLM cache, so only the
# lost items are asked again.
LOST_PREFIX = "llm "
MISSING_PREFIX = "llm missing:"


def lost_items(failures: pa.Table) -> int:
    """How many failures rows are items the LLM gave no usable answer for."""
    return sum(1 for error in failures.column("error").to_pylist() if str(error).startswith(LOST_PREFIX))


def forget_missing_replies(workspace: Workspace, doc_id: str, stage: str, llm: Any) -> int:
    """Drop from the LLM cache the replies that left items out (`llm missing` rows of the stage's last
    run): they were valid, so they were cached, and would otherwise leave the same items out again."""
    cache = getattr(llm, "cache", None)
    if cache is None:
        return 0
    failures = read_frame(workspace, "failures", doc_id)
    if failures.empty:
        return 0
    rows = failures[(failures["stage"] == stage) & failures["error"].str.startswith(MISSING_PREFIX)]
    dropped = 0
    for payload in rows["payload"]:
        try:
            key = json.loads(payload).get("call_key")
            path = cache.path(key)
        except (ValueError, TypeError, AttributeError):
            continue  # no readable key: nothing to forget
        try:
            path.unlink()
            dropped += 1
        except OSError:
            pass  # already gone, or not ours to remove: the item is asked from the cache again
    return dropped


def validate_outputs(stage: Stage, produced: dict[str, Any]) -> dict[str, pa.Table]:
    unexpected = set(produced) - set(stage.writes) - set(stage.side_writes)
    missing = set(stage.writes) - set(produced)
    if unexpected or missing:
        raise SchemaError(
            f"stage {stage.name} returned tables {sorted(produced)}; declared writes {list(stage.writes)}"
        )
    outputs = {name: to_arrow(name, produced[name]) for name in stage.writes}
    # Every stage run replaces its failures partition, so fixed problems disappear on rebuild.
    outputs["failures"] = to_arrow("failures", produced.get("failures", []))
    if "llm_calls" in produced and "llm_calls" in stage.side_writes:
        outputs["llm_calls"] = to_arrow("llm_calls", produced["llm_calls"])
    return outputs


def check_all(workspace: Workspace, doc_id: str, outputs: dict[str, pa.Table]) -> None:
    problems = check_outputs(workspace, doc_id, outputs)
    if problems:
        raise ContractError("; ".join(problems[:5]))
