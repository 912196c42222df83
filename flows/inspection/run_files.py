"""A run's files beside its tables: the run record `runs/<run_id>.json` (when it started and ended)
and the answer journal `runs/<run_id>.answers.jsonl` (one line per answer as it was produced)."""

from __future__ import annotations

import json
from typing import Any

from tasks.files import open_regular, read_text
from tasks.tables.io import Workspace


def read_run_files(places: list[Workspace], run_id: str) -> tuple[dict[str, Any], int]:
    """(the run record, the answers its journal holds), from whichever workspace holds them."""
    for workspace in places:
        folder = workspace.root / "runs"
        record_path, journal_path = folder / f"{run_id}.json", folder / f"{run_id}.answers.jsonl"
        if not record_path.is_file() and not journal_path.is_file():
            continue
        try:
            record = json.loads(read_text(record_path))
        except (OSError, ValueError):
            record = {}
        if not isinstance(record, dict):  # `[]` or `null` in the file: damaged, read as no record
            record = {}
        try:
            with open_regular(journal_path, text=True) as lines:
                journal = sum(1 for line in lines if line.strip())
        except OSError:
            journal = 0
        return record, journal
    return {}, 0
