"""The `eval_runs` table: what each evaluation run asked (questions file and hash, system, settings,
samples, ablation setting, build variant) and whether it finished (answered of expected answers).

A run's row is written when it starts (incomplete) and again when it ends, so a run that was killed
or lost answers never looks complete. Rows hold no clock: when a run started and ended is kept in
its run record, `runs/<run_id>.json`, beside the run's answer journal."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tasks.files import read_text
from tasks.tables.io import Workspace, atomic_write_text, write_table


def _flat(data: Any, prefix: str = "") -> dict[str, Any]:
    if not isinstance(data, dict):
        return {prefix: data}
    out: dict[str, Any] = {}
    for key, value in data.items():
        out.update(_flat(value, f"{prefix}.{key}" if prefix else str(key)))
    return out


def settings_summary(answering: dict[str, Any], defaults: dict[str, Any]) -> str:
    """The answering settings that differ from the defaults, as `section.field=value` (sorted)."""
    mine, base = _flat(answering), _flat(defaults)
    changed = [
        f"{key}={value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)}"
        for key, value in sorted(mine.items())
        if base.get(key) != value
    ]
    return ", ".join(changed)


def run_row(
    *,
    run_id: str,
    benchmark: str,
    questions_path: Path,
    questions_sha256: str,
    system: str,
    settings: str,
    setting: str,
    variant: str,
    ablation_id: str | None,
    limit: int | None,
    samples: int,
    expected: int,
    answered: int,
    is_offline: bool | None,
    judge_model: str | None,
) -> dict[str, Any]:
    """One `eval_runs` row; complete only when every expected answer was produced."""
    return {
        "run_id": run_id,
        "benchmark": benchmark,
        "questions_file": questions_path.name,
        "questions_sha256": questions_sha256,
        "system": system,
        "settings": settings,
        "setting": setting,
        "variant": variant,
        "ablation_id": ablation_id,
        "question_limit": limit,
        "samples": samples,
        "expected": expected,
        "answered": answered,
        "status": "complete" if expected and answered >= expected else "incomplete",
        "is_offline": is_offline,
        "judge_model": judge_model,
    }


def record_path(workspace: Workspace, run_id: str) -> Path:
    return workspace.root / "runs" / f"{run_id}.json"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def record_run(workspace: Workspace, row: dict[str, Any], finished: bool) -> None:
    """Write the run's row, and its start (or end) time into the run record."""
    write_table(workspace, "eval_runs", [row], row["run_id"])
    path = record_path(workspace, row["run_id"])
    record = {"run_id": row["run_id"], "started": _now(), "finished": None}
    if finished:
        record = {**read_record(workspace, row["run_id"]), "finished": _now()}
    atomic_write_text(path, json.dumps(record, indent=1) + "\n")


def read_record(workspace: Workspace, run_id: str) -> dict[str, Any]:
    """The run's start and end times (empty when the run predates run records)."""
    try:
        return json.loads(read_text(record_path(workspace, run_id)))
    except (OSError, ValueError):
        return {}
