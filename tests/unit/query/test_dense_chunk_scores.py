"""The hybrid retriever's dense chunk score: the best sentence's similarity by default, the
chunk's own vector with `[retrieval] dense_chunk_score = "chunk"`."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd

from tasks.query.hybrid.retrieve import dense_chunk_scores
from tasks.query.store.doc_index import DocumentIndex


def _index() -> SimpleNamespace:
    chunks = pd.DataFrame({"chunk_id": ["c1", "c2", "c3"]})
    # c2's sentences come first in the frame; c3 has no sentence; one sentence has no chunk
    sentences = pd.DataFrame({"chunk_id": ["c2", "c1", "c1", "c2", None]})
    index = SimpleNamespace(
        chunks=chunks,
        sentences=sentences,
        chunk_vectors=np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]], dtype=np.float32),
        sentence_vectors=np.array(
            [[0.0, 1.0], [0.8, 0.6], [0.0, 1.0], [1.0, 0.0], [1.0, 0.0]], dtype=np.float32
        ),
    )
    index.sentence_groups = DocumentIndex.sentence_groups.func(index)
    return index


def test_best_sentence_scores_each_chunk_by_its_most_similar_sentence() -> None:
    index = _index()
    query = np.array([1.0, 0.0], dtype=np.float32)
    scores = dense_chunk_scores(index, query)
    np.testing.assert_allclose(scores, [0.8, 1.0, 0.6], atol=1e-6)  # c3 falls back on its own vector
    np.testing.assert_allclose(dense_chunk_scores(index, query, "chunk"), [1.0, 0.0, 0.6], atol=1e-6)


def test_no_scores_without_comparable_vectors() -> None:
    index = _index()
    assert dense_chunk_scores(index, None) is None
    assert dense_chunk_scores(index, np.ones(3, dtype=np.float32)) is None
