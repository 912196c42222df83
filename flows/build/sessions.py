"""What a Prefect task needs besides its parameters, looked up by a session key.

Flow and task parameters are references only (paths, doc ids, hashes, settings, a session
key). The process that starts a run registers its clients (embedder, LLM client, progress
printer, stage list) under the key; a task running in that process finds them there. A
task running elsewhere (a worker process, a Dask worker) builds them from the settings once per
process and reuses them for every later task: each worker loads the embedding model once, and
prints its documents' stage lines itself.
"""

from __future__ import annotations

import os
import threading
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable

from flows.build.progress import Progress
from flows.build.runner import Resources
from flows.stages import Stage, select_stages
from schemas.config import Settings
from schemas.ids import stable_hash
from tasks.embeddings import build_embedder
from tasks.llm.client.factory import build_llm_client
from tasks.tables.io import Workspace


@dataclass
class Session:
    resources: Resources
    stages: list[Stage]
    progress: Progress | None = None  # stage lines (and, where the run started, document lines)


_SESSIONS: dict[str, Session] = {}
_WORKER_RESOURCES: dict[str, Resources] = {}
_LOCK = threading.Lock()


def api_key() -> str | None:
    return os.environ.get("NKW_API_KEY") or os.environ.get("OPENAI_API_KEY") or None


def make_resources(
    settings: Settings, llm: Any = None, embedder_factory: Callable | None = None
) -> Resources:
    return Resources(
        settings=settings,
        llm=llm,
        embedder_factory=embedder_factory or (lambda: build_embedder(settings.embed_texts, api_key())),
    )


def open_session(session: Session) -> str:
    key = uuid.uuid4().hex
    with _LOCK:
        _SESSIONS[key] = session
    return key


def close_session(key: str) -> None:
    with _LOCK:
        _SESSIONS.pop(key, None)


def settings_payload(settings: Settings) -> dict[str, Any]:
    """Settings as a flow parameter (a few KB whatever the corpus size)."""
    return settings.model_dump(mode="json")


def worker_settings(resources: Resources) -> dict[str, Any]:
    """The settings a worker process builds its clients from: without the LLM URL when this build
    fell back to the offline heuristics (the server did not answer), so workers do the same."""
    settings = resources.settings
    if resources.llm is None and settings.llm.url:
        settings = settings.model_copy(update={"llm": settings.llm.model_copy(update={"url": None})})
    return settings_payload(settings)


def registered_session(key: str) -> Session | None:
    """The session registered under `key` in this process (the one that started the run), if any."""
    with _LOCK:
        return _SESSIONS.get(key)


def session_for(
    key: str,
    settings: dict[str, Any],
    stage_names: list[str],
    workspace: str,
    quiet: bool = True,
    force: list[str] = (),
) -> Session:
    """The registered session, or one built from the parameters (once per worker process): the
    workspace's LLM cache and vector store, the stages forced to rebuild."""
    with _LOCK:
        found = _SESSIONS.get(key)
        if found is not None:
            return found
        parsed = Settings.model_validate(settings)
        resources_key = stable_hash("resources", settings, workspace, sorted(force))
        resources = _WORKER_RESOURCES.get(resources_key)
        if resources is None:
            target = Workspace.at(workspace)
            llm = build_llm_client(parsed.llm, api_key(), target.cache_dir / "llm")
            resources = replace(
                make_resources(parsed, llm=llm),
                force=frozenset(force),
                vectors_dir=target.cache_dir / "vectors",
            )
            _WORKER_RESOURCES[resources_key] = resources
        return Session(
            resources=resources, stages=select_stages(stage_names or None), progress=Progress(0, quiet=quiet)
        )
