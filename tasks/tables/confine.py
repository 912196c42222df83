"""Writes stay inside the workspace: no folder of it may be a link to somewhere else.

A link planted in the workspace (`tables/chunks -> /elsewhere`) would carry every write of a
rebuild to wherever it points. Writers check twice: the writer lock refuses a workspace that
holds a folder linked outside it anywhere (`escaping_links`), and each partition write checks
the folders on its own path (`check_path`), so a link planted while a build runs is refused too.
A link to a *file* is harmless to writers: a rename replaces the link itself, never its target.

Links that stay home are allowed: inside the workspace, or into a workspace that holds this
one (an ablation variant, `<base>/variants/<name>`, shares its base's LLM cache by a link).
"""

from __future__ import annotations

import os
from pathlib import Path


class WorkspaceEscape(RuntimeError):
    """A folder of the workspace is a link: writing through it would leave the workspace."""


def escaping_links(root: Path) -> list[Path]:
    """Every folder inside `root` that is a link leading out of it (links are listed, never followed)."""
    found: list[Path] = []
    for dirpath, dirnames, _files in os.walk(root, followlinks=False):
        for name in dirnames:
            path = Path(dirpath) / name
            if path.is_symlink() and not _stays_home(root, path):
                found.append(path)
    return sorted(found)


def _stays_home(root: Path, link: Path) -> bool:
    target = Path(os.path.realpath(link))
    homes = [root] + [folder for folder in root.parents if _is_workspace(folder)]
    return any(target == home or home in target.parents for home in homes)


def _is_workspace(folder: Path) -> bool:
    return (folder / "tables").is_dir() and (folder / "manifest").is_dir()


def describe(root: Path, link: Path) -> str:
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    return (
        f"workspace {root}: {link.relative_to(root)} is a symbolic link (to {target}); writes would "
        "leave the workspace — remove the link"
    )


def check_path(root: Path, path: Path) -> None:
    """Raise WorkspaceEscape unless every existing folder from `root` down to `path` is a real folder."""
    try:
        parts = path.relative_to(root).parts[:-1]
    except ValueError:
        raise WorkspaceEscape(f"workspace {root}: {path} is outside it") from None
    folder = root
    for part in parts:
        folder = folder / part
        if folder.is_symlink() and not _stays_home(root, folder):
            raise WorkspaceEscape(describe(root, folder))
        if not folder.exists():
            return  # the rest is created by the writer, as real folders
