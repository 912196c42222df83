"""The LLM response cache: one JSON file per validated reply, keyed by what was asked.

The key covers model, messages, sampling parameters, response schema and a cache version,
and deliberately excludes the server URL, API key and timeouts, so moving the server (or
rotating the key) keeps the cache. Only replies that passed validation are stored.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Any, Mapping, Sequence

from tasks.files import open_regular

_KEY = re.compile(r"^[0-9a-f]{64}$")


def cache_key(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    sampling: Mapping[str, Any],
    response_schema: Mapping[str, Any] | None,
    cache_version: str = "1",
) -> str:
    """sha256 hex over a canonical JSON of exactly what was asked (no URL, key or timeouts)."""
    canonical = json.dumps(
        {
            "cache_version": cache_version,
            "model": model,
            "messages": [dict(m) for m in messages],
            "sampling": dict(sampling),
            "response_schema": response_schema,
        },
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class LLMCache:
    """Validated LLM replies under `<root>/<key[:2]>/<key>.json`, safe for concurrent threads."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        # Writes are atomic renames of unique temp files, so readers never see partial files;
        # the lock only keeps two writers of the same key from racing on directory creation.
        self._lock = threading.Lock()

    def path(self, key: str) -> Path:
        """The file a key is stored in; rejects anything that is not a sha256 hex digest."""
        if not _KEY.match(key):
            raise ValueError(f"not an LLM cache key: {key[:80]!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored payload of `key`, or None when absent or unreadable (treated as a miss)."""
        try:
            with open_regular(self.path(key), text=True) as handle:
                payload = json.load(handle)
        except (OSError, ValueError):
            return None
        return payload if isinstance(payload, dict) else None

    def put(self, key: str, payload: dict[str, Any]) -> None:
        """Store `payload` under `key`: write a temp file beside the target, then rename it into place."""
        target = self.path(key)
        data = json.dumps(payload, ensure_ascii=False, sort_keys=True)
        with self._lock:
            target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=f".{key[:8]}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(data)
            os.replace(temp, target)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("??/*.json")) if self.root.is_dir() else 0
