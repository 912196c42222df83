"""Embed every chunk and sentence of a document (batched) into the `embeddings` table.

With `[embed_texts] chunk_vectors = "sentences"` (the default) only the sentences go to the
model and each chunk's vector is derived from its sentences' (tasks.index.derived_vectors):
half the tokens, and a chunk's vector covers all of it (the model reads 256 word pieces).
`"embedded"` embeds each chunk's text. The hybrid retriever scores a chunk by its best
sentence by default, so its ranking does not depend on this setting."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from tasks.embeddings import Embedder
from tasks.index.derived_vectors import group_means
from tasks.index.vector_table import vector_table
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens


def embedding_table(
    doc_id: str, units: list[tuple[str, list[str], np.ndarray]], model: str
) -> pa.Table:
    """`embeddings` rows of (unit kind, unit ids, their vectors) groups, in order."""
    kinds = [kind for kind, ids, _ in units for _ in ids]
    ids = [unit_id for _, unit_ids, _ in units for unit_id in unit_ids]
    vectors = [v for _, unit_ids, v in units if len(unit_ids)]
    columns = {"doc_id": [doc_id] * len(ids), "unit_kind": kinds, "unit_id": ids, "model": [model] * len(ids)}
    return vector_table("embeddings", columns, np.concatenate(vectors) if vectors else np.zeros((0, 0)))


def derived_chunk_vectors(
    chunk_ids: list[str],
    chunk_texts: list[str],
    sentence_chunk_ids: list[str],
    sentence_texts: list[str],
    sentence_vectors: np.ndarray,
    embedder: Embedder,
) -> np.ndarray:
    """Each chunk's vector from its sentences' (weighted by tokens); a chunk with no sentence is
    embedded from its text."""
    weights = [max(count_tokens(text), 1) for text in sentence_texts]
    vectors, empty = group_means(chunk_ids, sentence_chunk_ids, sentence_vectors, weights)
    if empty:
        embedded = embedder.embed([chunk_texts[row] for row in empty])
        if vectors.shape[1] == 0:  # no sentence at all: the dimension comes from the model
            vectors = np.zeros((len(chunk_ids), embedded.shape[1]), dtype=np.float32)
        vectors[empty] = embedded
    return vectors


def _embed(embedder: Embedder, texts: list[str]) -> np.ndarray:
    return embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)


def run(ctx: StageContext) -> StageOutput:
    if ctx.embedder is None:
        raise RuntimeError("embed_texts needs an embedder")
    chunks, sentences = ctx.table("chunks"), ctx.table("sentences")
    chunk_ids, chunk_texts = chunks["chunk_id"].tolist(), chunks["text"].tolist()
    sentence_ids, sentence_texts = sentences["sentence_id"].tolist(), sentences["text"].tolist()
    # sentences first: stages running beside this one embed texts equal to sentences (event
    # descriptions), which the vector store then serves rather than embedding them again
    sentence_vectors = _embed(ctx.embedder, sentence_texts)
    if ctx.settings.embed_texts.chunk_vectors == "embedded":
        chunk_vectors = _embed(ctx.embedder, chunk_texts)
    else:
        chunk_vectors = derived_chunk_vectors(
            chunk_ids,
            chunk_texts,
            sentences["chunk_id"].tolist(),
            sentence_texts,
            sentence_vectors,
            ctx.embedder,
        )
    units = [("chunk", chunk_ids, chunk_vectors), ("sentence", sentence_ids, sentence_vectors)]
    return {"embeddings": embedding_table(ctx.doc_id, units, ctx.embedder.name)}
