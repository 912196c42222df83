"""The default embedder: MiniLM loaded offline from its wheel (about 7 s, once)."""

import numpy as np

from tasks.embeddings import MiniLMEmbedder, embedder_for_identity
from schemas.config import EmbedTextsSettings


def test_minilm_vectors_are_normalised_and_semantic():
    embedder = MiniLMEmbedder(batch_size=8)
    vectors = embedder.embed(["The keeper lights the lamp.", "She switches on the lighthouse lamp.", "Stock prices fell."])
    assert vectors.shape == (3, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert embedder.embed([]).shape == (0, 384)
    assert isinstance(embedder_for_identity(embedder.name, EmbedTextsSettings()), MiniLMEmbedder)
