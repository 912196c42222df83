"""`nkw build --retry-failed`: which inputs to build again to retry what a build lost."""

from __future__ import annotations

from pathlib import Path

from tasks.tables.io import Workspace
from tasks.tables.manifest import list_manifests


def paths_to_retry(workspace: Workspace) -> list[str]:
    """The recorded input files of documents with a partial or failed stage (each file once)."""
    paths: list[str] = []
    for manifest in list_manifests(workspace):
        if not any(record.status in ("partial", "failed") for record in manifest.stages.values()):
            continue
        path = manifest.source.split("#", 1)[0]
        if path and path not in paths and Path(path).exists():
            paths.append(path)
    return paths
