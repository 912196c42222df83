"""A build with the thread runner loads the embedding model while Prefect's server starts; worker
processes load their own, so the building process does not."""

import threading

import numpy as np

from flows.build_corpus import _load_model_meanwhile
from flows.build.sessions import make_resources
from flows.stages import select_stages
from schemas.config import load_settings
from tasks.vector_store import CachingEmbedder


class PreparedEmbedder:
    name = "test:prepared"

    def __init__(self) -> None:
        self.prepared = threading.Event()

    def prepare(self) -> None:
        self.prepared.set()

    def embed(self, texts):
        return np.zeros((len(texts), 4), dtype=np.float32)


def _resources(tmp_path, embedder):
    resources = make_resources(load_settings(), embedder_factory=lambda: embedder)
    resources.vectors_dir = tmp_path / "vectors"
    return resources


def test_the_thread_runner_loads_the_model_in_the_background(tmp_path) -> None:
    embedder = PreparedEmbedder()
    resources = _resources(tmp_path, embedder)
    _load_model_meanwhile(resources, select_stages(), "thread")
    assert embedder.prepared.wait(10)
    assert isinstance(resources.embedder, CachingEmbedder)  # the store's wrapper passes it on


def test_worker_processes_and_stages_without_embedding_load_nothing_here(tmp_path) -> None:
    embedder = PreparedEmbedder()
    resources = _resources(tmp_path, embedder)
    _load_model_meanwhile(resources, select_stages(), "process")
    without_embedding = [s for s in select_stages() if not s.needs_embedder]
    _load_model_meanwhile(resources, without_embedding, "thread")
    assert not embedder.prepared.wait(0.5)
    assert resources._embedder is None  # not even built


def test_a_model_that_fails_to_load_in_the_background_is_left_to_the_stage(tmp_path, monkeypatch) -> None:
    calls = []

    def failing():
        calls.append(1)
        raise OSError("model folder missing")

    escaped = []
    monkeypatch.setattr(threading, "excepthook", escaped.append)
    resources = make_resources(load_settings(), embedder_factory=failing)
    _load_model_meanwhile(resources, select_stages(), "thread")
    for thread in threading.enumerate():
        if thread.name == "load-embedder":
            thread.join(10)
    assert calls == [1] and escaped == []  # tried once, nothing escaped the thread
    assert resources._embedder is None  # the first stage that embeds builds it again and reports
