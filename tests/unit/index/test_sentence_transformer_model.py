"""Any sentence-transformers model from a local folder: a tiny BERT built here (random weights, a
word-level vocabulary; nothing downloaded) loads through `[embed_texts] model = "/path"`, while the
default name keeps the bundled MiniLM's own fast path."""

from __future__ import annotations

import numpy as np
import pytest

from schemas.config import EmbedTextsSettings
from tasks.embeddings import (
    MiniLMEmbedder,
    SentenceTransformerEmbedder,
    build_embedder,
    embedder_for_identity,
    embedder_identity,
)

WORDS = "the keeper lighthouse key brass tom hides van sea night 她 走 进 房 间".split()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A 16-dimensional BERT with mean pooling, saved as a sentence-transformers folder."""
    transformers = pytest.importorskip("transformers")
    sentence_transformers = pytest.importorskip("sentence_transformers")
    folder = tmp_path_factory.mktemp("tiny")
    bert = folder / "bert"
    bert.mkdir()
    vocab = bert / "vocab.txt"
    vocab.write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]) + "\n", encoding="utf-8"
    )
    transformers.BertTokenizerFast(vocab_file=str(vocab), do_lower_case=True).save_pretrained(bert)
    config = transformers.BertConfig(
        vocab_size=5 + len(WORDS),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    transformers.set_seed(0)
    transformers.BertModel(config).save_pretrained(bert)
    try:  # sentence-transformers 6 moved its modules; older releases keep them in `models`
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    except ImportError:
        from sentence_transformers.models import Pooling, Transformer
    word = Transformer(str(bert), max_seq_length=32)
    pooling = Pooling(config.hidden_size, pooling_mode="mean")
    path = folder / "tiny-sentence-model"
    sentence_transformers.SentenceTransformer(modules=[word, pooling], device="cpu").save(str(path))
    return path


@pytest.mark.slow
def test_a_model_folder_loads_through_sentence_transformers(tiny_model):
    from sentence_transformers import SentenceTransformer

    settings = EmbedTextsSettings(model=str(tiny_model))
    embedder = build_embedder(settings)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == embedder_identity(settings) == f"sentence-transformers:{tiny_model}"
    texts = ["Tom hides the brass key in the van", "the keeper of the lighthouse", "她走进了房间"]
    vectors = embedder.embed(texts)
    assert vectors.shape == (3, 16) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    reference = SentenceTransformer(str(tiny_model), device="cpu").encode(texts, normalize_embeddings=True)
    np.testing.assert_allclose(vectors, reference, atol=1e-5)
    assert embedder.embed([]).shape == (0, 16)
    # A workspace embedded with it is queried with the same model, found by its identity.
    again = embedder_for_identity(embedder.name, EmbedTextsSettings())
    assert isinstance(again, SentenceTransformerEmbedder)
    np.testing.assert_allclose(again.embed(texts[:1]), vectors[:1], atol=1e-6)


def test_the_default_model_keeps_the_fast_path_and_a_missing_folder_is_named(tmp_path):
    assert isinstance(build_embedder(EmbedTextsSettings()), MiniLMEmbedder)
    assert embedder_identity(EmbedTextsSettings()) == "minilm:all-MiniLM-L6-v2"
    missing = build_embedder(EmbedTextsSettings(model=str(tmp_path / "no-such-model")))
    with pytest.raises(ValueError, match="embedding model folder not found"):
        missing.embed(["a text"])
