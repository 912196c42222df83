"""The partition ledger: every Parquet partition a build or evaluation wrote, with its hash.

`tables/<table>/<file>.parquet` is trusted only when `manifest/partitions/<table>/<file>.json`
records it (size and sha256). The entry is written *before* the partition is renamed into
place, so a writer killed in between never leaves an unrecorded file that is trusted. The
entry keeps the content it replaces as `previous`, and readers accept either: a reader that
looks while a build rewrites a partition sees the old file or the new one, never neither. (The
build itself trusts only the current content: `tasks.tables.manifest.is_up_to_date`.) Readers
look at the file before the entry, so an entry can only be newer than the file they saw.
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

from tasks.files import NotRegularFile, open_regular, read_text

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
    payload: dict = {"sha256": sha256, "size": size}
    before = _entry(root, partition)
    if before is not None and before.get("sha256") != sha256:
        payload["previous"] = {"sha256": before.get("sha256"), "size": before.get("size")}
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir() and not path.is_symlink():  # a rename cannot replace it: say which file is wrong
        raise NotRegularFile(f"{path} is a folder, not a regular file; move it away")
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(json.dumps(payload, sort_keys=True))
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
        entry = json.loads(read_text(entry_path(root, partition)))
    except (OSError, ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


def _versions(entry: dict) -> list[dict]:
    """The current content of an entry, then the content it replaced (if any)."""
    previous = entry.get("previous")
    return [entry] + ([previous] if isinstance(previous, dict) else [])


def current_sha256(root: Path, partition: Path) -> str | None:
    """The content the last write of `partition` recorded (None when nothing is recorded)."""
    entry = _entry(root, partition)
    return None if entry is None else entry.get("sha256")


def is_known(root: Path, partition: Path) -> bool:
    """Cheap check (no hashing): recorded, the file has the recorded size (now or before), and it
    still looks like Parquet (a file overwritten in place keeps its size but loses its magic)."""
    if not has_ledger(root):
        return True
    try:
        size = partition.stat().st_size  # the file first: see the module's docstring
    except OSError:
        return False
    entry = _entry(root, partition)
    if entry is None or not any(size == version.get("size") for version in _versions(entry)):
        return False
    return partition.suffix != ".parquet" or _looks_like_parquet(partition)


PARQUET_MAGIC = b"PAR1"


def _looks_like_parquet(path: Path) -> bool:
    try:
        with open_regular(path) as handle:
            head = handle.read(4)
            handle.seek(-4, os.SEEK_END)
            return head == PARQUET_MAGIC and handle.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open_regular(path) as handle:
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
        if legacy:
            result.trusted.append(path)
            continue
        try:
            size, digest = path.stat().st_size, file_sha256(path)  # the file first: see the docstring
        except OSError:
            continue  # removed meanwhile
        entry = _entry(root, path)
        if entry is None:
            result.unknown.append(path)
        elif any(size == v.get("size") and digest == v.get("sha256") for v in _versions(entry)):
            result.trusted.append(path)
        else:
            result.altered.append(path)
    return result
