"""Stage embed_texts: one normalised vector per chunk and sentence; the default embedder is MiniLM
loaded offline from its wheel (about 7 s, once)."""

import numpy as np

from schemas.config import EmbedTextsSettings
from tasks.embeddings import MiniLMEmbedder, embedder_for_identity
from tasks.tables.io import read_frame


def test_every_chunk_and_sentence_has_a_unit_vector(segmented):
    for doc_id in ("kitchen", "shop"):
        chunks = read_frame(segmented, "chunks", doc_id)
        sentences = read_frame(segmented, "sentences", doc_id)
        embeddings = read_frame(segmented, "embeddings", doc_id)
        assert len(embeddings) == len(chunks) + len(sentences)
        assert embeddings["model"].unique().tolist() == ["hashing:64"]
        norms = np.linalg.norm(np.array(embeddings["vector"].tolist()), axis=1)
        assert np.allclose(norms[norms > 0], 1.0, atol=1e-5)


def test_minilm_vectors_are_normalised_and_semantic():
    embedder = MiniLMEmbedder(batch_size=8)
    vectors = embedder.embed(
        ["The keeper lights the lamp.", "She switches on the lighthouse lamp.", "Stock prices fell."]
    )
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert embedder.embed([]).shape == (0, 384)
    assert isinstance(embedder_for_identity(embedder.name, EmbedTextsSettings()), MiniLMEmbedder)
