"""The workspace vector store: each text embedded once per model, persisted across sessions,
and builds whose tables are the same with and without it."""

from __future__ import annotations

import threading

import numpy as np

from flows.build.corpus import build, make_resources
from tasks.embeddings import HashingEmbedder
from tasks.tables.io import Workspace, read_frame
from tasks.vector_store import CachingEmbedder, VectorStore, caching
from tests.conftest import SCREENPLAY


class CountingEmbedder:
    """A model-like embedder (not named hashing:, so it is cached) that records what it embeds."""

    def __init__(self) -> None:
        self.name = "counting:384"
        self.inner = HashingEmbedder(384)
        self.seen: list[str] = []

    def embed(self, texts):
        self.seen.extend(texts)
        return self.inner.embed(texts)


def test_each_text_is_embedded_once_and_served_equal(tmp_path) -> None:
    model = CountingEmbedder()
    embedder = CachingEmbedder(model, VectorStore(tmp_path, model.name))
    first = embedder.embed(["a lamp", "the sea", "a lamp"])
    second = embedder.embed(["the sea", "a key"])
    assert model.seen == ["a lamp", "the sea", "a key"]
    np.testing.assert_allclose(first, model.inner.embed(["a lamp", "the sea", "a lamp"]), atol=1e-6)
    np.testing.assert_allclose(second, model.inner.embed(["the sea", "a key"]), atol=1e-6)
    assert embedder.served_texts == 2 and embedder.embedded_texts == 3
    assert embedder.flush() == 3 and embedder.flush() == 0


def test_flushed_vectors_serve_a_later_session(tmp_path) -> None:
    first = CachingEmbedder(CountingEmbedder(), VectorStore(tmp_path, "counting:384"))
    first.embed(["a lamp", "the sea"])
    first.flush()
    model = CountingEmbedder()
    later = CachingEmbedder(model, VectorStore(tmp_path, "counting:384"))
    later.embed(["the sea", "a key"])
    assert model.seen == ["a key"]
    (tmp_path / "counting_384" / "broken.npz").write_bytes(b"not a shard")
    assert len(VectorStore(tmp_path, "counting:384")) == 2  # an unreadable shard only costs re-embedding


def test_hashing_embedder_is_not_cached() -> None:
    hashing = HashingEmbedder(16)
    assert caching(hashing, None) is hashing and caching(None, None) is None


def test_tables_are_unchanged_by_vector_reuse(tmp_path, hashing_settings) -> None:
    frames = {}
    models = {}
    for reuse in (False, True):
        workspace = Workspace.at(tmp_path / f"reuse-{reuse}")
        model = models[reuse] = CountingEmbedder()
        resources = make_resources(hashing_settings, embedder_factory=lambda m=model: m)
        resources.reuse_vectors = reuse
        assert build([str(SCREENPLAY)], workspace, hashing_settings, resources=resources, quiet=True).ok
        frames[reuse] = {t: read_frame(workspace, t) for t in ("episodes", "episode_links")}
        for table in ("embeddings", "asset_embeddings"):
            frame = read_frame(workspace, table)
            frames[reuse][table] = frame.sort_values(["unit_kind", "unit_id"]).reset_index(drop=True)
    assert len(models[True].seen) < len(models[False].seen)  # texts shared by stages were embedded once
    assert len(set(models[True].seen)) == len(models[True].seen)
    for table in ("embeddings", "asset_embeddings"):
        before, after = frames[False][table], frames[True][table]
        assert list(before["unit_id"]) == list(after["unit_id"]) and list(before["model"]) == list(
            after["model"]
        )
        np.testing.assert_allclose(np.stack(before["vector"]), np.stack(after["vector"]), atol=1e-6)
    for table in ("episodes", "episode_links"):
        assert frames[False][table].equals(frames[True][table])
    assert any((tmp_path / "reuse-True" / "cache" / "vectors").rglob("*.npz"))


class GatedEmbedder(CountingEmbedder):
    """Blocks its first call until released, so a second call arrives while texts are in flight."""

    def __init__(self) -> None:
        super().__init__()
        self.entered, self.release = threading.Event(), threading.Event()
        self.fail_first = False

    def embed(self, texts):
        if not self.entered.is_set():
            self.entered.set()
            self.release.wait(5)
            if self.fail_first:
                raise RuntimeError("model down")
        return super().embed(texts)


def _in_flight(model: GatedEmbedder, tmp_path) -> tuple[dict, CachingEmbedder]:
    embedder = CachingEmbedder(model, VectorStore(tmp_path, model.name))
    results: dict = {}

    def first() -> None:
        try:
            results["first"] = embedder.embed(["a lamp", "the sea"])
        except RuntimeError as error:
            results["first"] = error

    worker = threading.Thread(target=first)
    worker.start()
    assert model.entered.wait(5)
    second = threading.Thread(
        target=lambda: results.setdefault("second", embedder.embed(["the sea", "a key"]))
    )
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waits for "the sea", embedded by the first call
    model.release.set()
    worker.join(5)
    second.join(5)
    return results, embedder


def test_a_text_in_flight_is_waited_for_not_embedded_again(tmp_path) -> None:
    model = GatedEmbedder()
    results, embedder = _in_flight(model, tmp_path)
    assert sorted(model.seen) == ["a key", "a lamp", "the sea"]
    np.testing.assert_allclose(results["second"], model.inner.embed(["the sea", "a key"]), atol=1e-6)
    assert embedder.embedded_texts == 3 and embedder.served_texts == 1


def test_a_failed_call_in_flight_leaves_its_texts_to_the_waiting_call(tmp_path) -> None:
    model = GatedEmbedder()
    model.fail_first = True
    results, _ = _in_flight(model, tmp_path)
    assert isinstance(results["first"], RuntimeError)
    np.testing.assert_allclose(results["second"], model.inner.embed(["the sea", "a key"]), atol=1e-6)
    assert sorted(model.seen) == ["a key", "the sea"]
