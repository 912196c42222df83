"""The partition ledger: every Parquet partition a build or evaluation wrote, with its hash.

`tables/<table>/<file>.parquet` is trusted only when `manifest/partitions/<table>/<file>.json`
records it (size and sha256). The entry is written *before* the partition is renamed into
place, so a writer killed in between leaves an entry that no longer matches the file (the
file is then treated as altered and rebuilt), never an unrecorded file that is trusted.
Files nobody wrote through the writer (copied in by hand, or edited afterwards) are
"unknown" or "altered": readers leave them out and `nkw inspect` lists them.

A workspace built before the ledger existed has no `manifest/partitions/` folder; its files
are read as before and `nkw inspect` says they are unverified.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

LEDGER_DIR = ("manifest", "partitions")


def ledger_root(root: Path) -> Path:
    return root.joinpath(*LEDGER_DIR)


def entry_path(root: Path, partition: Path) -> Path:
    return ledger_root(root) / partition.parent.name / f"{partition.name}.json"


def has_ledger(root: Path) -> bool:
    return ledger_root(root).is_dir()


def record(root: Path, partition: Path, sha256: str, size: int) -> None:
    """Record (before it lands) that `partition` will hold `size` bytes hashing to `sha256`."""
    if not has_ledger(root):
        _adopt_existing(root)
    path = entry_path(root, partition)
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(json.dumps({"sha256": sha256, "size": size}, sort_keys=True))
    os.replace(temp, path)


def _adopt_existing(root: Path) -> None:
    """A workspace from before the ledger: its files are taken as they are, once."""
    ledger_root(root).mkdir(parents=True, exist_ok=True)
    tables = root / "tables"
    for partition in sorted(tables.glob("*/*.parquet")) if tables.is_dir() else []:
        if partition.is_file():
            record(root, partition, file_sha256(partition), partition.stat().st_size)


def forget(root: Path, partition: Path) -> None:
    entry_path(root, partition).unlink(missing_ok=True)


def _entry(root: Path, partition: Path) -> dict | None:
    try:
        return json.loads(entry_path(root, partition).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def is_known(root: Path, partition: Path) -> bool:
    """Cheap check (no hashing): recorded, and the file has the recorded size."""
    if not has_ledger(root):
        return True
    entry = _entry(root, partition)
    if entry is None:
        return False
    try:
        return partition.stat().st_size == entry.get("size")
    except OSError:
        return False


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass
class Verification:
    trusted: list[Path] = field(default_factory=list)
    unknown: list[Path] = field(default_factory=list)  # no ledger entry
    altered: list[Path] = field(default_factory=list)  # entry exists, content differs

    def extend(self, other: "Verification") -> None:
        self.trusted += other.trusted
        self.unknown += other.unknown
        self.altered += other.altered


def verify(root: Path, files: list[Path]) -> Verification:
    """Full check (hashes every file): which partitions are exactly what the writer recorded."""
    result = Verification()
    legacy = not has_ledger(root)
    for path in files:
        entry = None if legacy else _entry(root, path)
        if legacy:
            result.trusted.append(path)
        elif entry is None:
            result.unknown.append(path)
        elif path.stat().st_size != entry.get("size") or file_sha256(path) != entry.get("sha256"):
            result.altered.append(path)
        else:
            result.trusted.append(path)
    return result
