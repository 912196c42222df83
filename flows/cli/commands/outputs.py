"""Where `--out` points: always a folder, the same for `view`, `export` and `report`. The older
forms (`report --out FILE.html`, `export --out STEM.graphml`) still work, with a notice."""

from __future__ import annotations

import sys
from pathlib import Path

from tasks.terminal import say


def legacy_file(out: str, suffixes: tuple[str, ...], command: str, example: str) -> Path | None:
    """The file `out` names in the older form (an existing folder never is one), else None."""
    path = Path(out)
    if path.is_dir() or path.suffix.lower() not in suffixes:
        return None
    say(
        f"notice: `nkw {command} --out` names a folder now; {path.name} is read as a file name, "
        f"as before (write --out {path.parent} to get {example})",
        file=sys.stderr,
    )
    return path
