"""Chunk vectors derived from their sentences' vectors (each text embedded once)."""

from __future__ import annotations

import numpy as np

from flows.build.corpus import build, make_resources
from tasks.embeddings import HashingEmbedder
from tasks.index.derived_vectors import group_means
from tasks.index.embed_texts import derived_chunk_vectors
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY


class Recording:
    def __init__(self) -> None:
        self.name, self.inner, self.seen = "recording:64", HashingEmbedder(64), []

    def embed(self, texts):
        self.seen.extend(texts)
        return self.inner.embed(texts)


def test_group_means_are_weighted_normalised_and_report_empty_groups() -> None:
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=np.float32)
    means, empty = group_means(["a", "b", "c"], ["a", "a", "b"], vectors, [3, 1, 2])
    np.testing.assert_allclose(means[0], np.array([3.0, 1.0]) / np.sqrt(10.0), atol=1e-6)
    np.testing.assert_allclose(means[1], [0.0, 1.0], atol=1e-6)
    assert empty == [2] and not means[2].any()


def test_chunk_vectors_come_from_sentences_and_only_empty_chunks_are_embedded() -> None:
    model = Recording()
    sentences = ["The keeper climbs the stairs.", "He lights the lamp.", "A ship passes."]
    sentence_vectors = model.embed(sentences)
    model.seen.clear()
    vectors = derived_chunk_vectors(
        ["c1", "c2", "c3"],
        ["The keeper climbs the stairs. He lights the lamp.", "A ship passes.", "Fog."],
        ["c1", "c1", "c2"],
        sentences,
        sentence_vectors,
        model,
    )
    assert model.seen == ["Fog."]  # the one chunk without sentences
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(vectors[1], sentence_vectors[2], atol=1e-6)
    np.testing.assert_allclose(vectors[2], model.inner.embed(["Fog."])[0], atol=1e-6)
    assert vectors[0] @ sentence_vectors[0] > 0.5 and vectors[0] @ sentence_vectors[1] > 0.5


def test_the_embedded_setting_embeds_chunk_texts_and_the_default_does_not(tmp_path, hashing_settings) -> None:
    sent = {}
    for mode in ("sentences", "embedded"):
        section = hashing_settings.embed_texts.model_copy(update={"chunk_vectors": mode})
        settings = hashing_settings.model_copy(update={"embed_texts": section})
        model = Recording()
        workspace = Workspace.at(tmp_path / mode)
        resources = make_resources(settings, embedder_factory=lambda: model)
        assert build([str(SCREENPLAY)], workspace, settings, resources=resources, quiet=True).ok
        chunks, sentences = read_frame(workspace, "chunks"), read_frame(workspace, "sentences")
        sent[mode] = len((set(chunks["text"]) - set(sentences["text"])) & set(model.seen))
        assert len(read_frame(workspace, "embeddings")) == len(chunks) + len(sentences)
    assert sent["sentences"] == 0 and sent["embedded"] > 0
