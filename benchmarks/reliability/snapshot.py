"""File-tree fingerprints: a read-only attack must leave every file as it was."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def snapshot(*roots: Path) -> dict[str, str]:
    """Path -> sha256 of every file (symlinks by target) under `roots`."""
    state: dict[str, str] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                if path.is_symlink():
                    state[str(path)] = "link:" + os.readlink(path)
                elif path.is_file():
                    state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
    return state
