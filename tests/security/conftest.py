"""A workspace built once for the attack tests, a snapshot of every file in it, and a
working folder that holds the traps (`.tmp/`, a symlink to /etc)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from tests.conftest import SCREENPLAY


def snapshot(*roots: Path) -> dict[str, str]:
    """Path -> sha256 of every file (and symlink target) under `roots`."""
    state: dict[str, str] = {}
    for root in roots:
        for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
            for name in dirnames + filenames:
                path = Path(dirpath) / name
                if path.is_symlink():
                    state[str(path)] = "link:" + os.readlink(path)
                elif path.is_file():
                    state[str(path)] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    state[str(path)] = "dir"
    return state


@pytest.fixture(scope="package")
def built_workspace(tmp_path_factory):
    from flows.build.corpus import build
    from schemas.config import load_settings
    from tasks.tables.io import Workspace

    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    workspace = Workspace.at(tmp_path_factory.mktemp("attacked") / "ws")
    report = build([str(SCREENPLAY)], workspace, settings, quiet=True)
    assert report.ok, report.summary()
    return workspace


@pytest.fixture()
def trap_folder(tmp_path, monkeypatch):
    """The current folder during a test: `.tmp/` with a file in it, and `etc` -> /etc."""
    folder = tmp_path / "cwd"
    (folder / ".tmp").mkdir(parents=True)
    (folder / ".tmp" / "x.csv").write_text("secret\nfrom-temp-dir\n")
    (folder / "etc").symlink_to("/etc")
    monkeypatch.chdir(folder)
    return folder
