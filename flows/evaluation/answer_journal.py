"""Answers written as they are produced: one JSON line per answer in
`<workspace>/runs/<run_id>.answers.jsonl`, flushed at once, so an evaluation that stops
(killed, out of time, a crash while writing the tables) keeps everything it answered."""

from __future__ import annotations

import json
import math
import os
import threading
from pathlib import Path
from typing import Any

from tasks.files import open_append, read_text
from tasks.tables.io import Workspace


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return _plain(value.tolist())
    return value


class AnswerJournal:
    def __init__(self, workspace: Workspace, run_id: str) -> None:
        self.path: Path = workspace.root / "runs" / f"{run_id}.answers.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self.count = 0
        with open_append(self.path, truncate=True):
            pass  # a rerun of the same run starts a fresh journal

    def add(self, row: dict[str, Any]) -> None:
        line = json.dumps({k: _plain(v) for k, v in row.items()}, ensure_ascii=False, default=str)
        with self._lock, open_append(self.path) as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())
            self.count += 1


def read_journal(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in read_text(path).splitlines() if line.strip()]
