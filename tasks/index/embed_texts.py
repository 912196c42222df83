"""Embed every chunk and sentence of a document (batched) into the `embeddings` table.

`[embed_texts] chunk_vectors = "embedded"` (the default) embeds each chunk's text; with
`"sentences"` only the sentences go to the model and each chunk's vector is derived from its
sentences' (tasks.index.derived_vectors): half the tokens, but a chunk's vector then covers all
of it (the model reads 256 word pieces) and retrieval changes."""

from __future__ import annotations

from typing import Any

import numpy as np

from tasks.embeddings import Embedder
from tasks.index.derived_vectors import group_means
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens


def _rows(doc_id: str, unit_kind: str, unit_ids: list[str], vectors: np.ndarray, model: str) -> list[dict]:
    return [
        {"doc_id": doc_id, "unit_kind": unit_kind, "unit_id": unit_id, "model": model, "vector": v.tolist()}
        for unit_id, v in zip(unit_ids, vectors)
    ]


def embedding_rows(
    doc_id: str, unit_kind: str, unit_ids: list[str], texts: list[str], embedder: Embedder
) -> list[dict[str, Any]]:
    vectors = embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    return _rows(doc_id, unit_kind, unit_ids, vectors, embedder.name)


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


def run(ctx: StageContext) -> StageOutput:
    if ctx.embedder is None:
        raise RuntimeError("embed_texts needs an embedder")
    chunks, sentences = ctx.table("chunks"), ctx.table("sentences")
    chunk_ids, chunk_texts = chunks["chunk_id"].tolist(), chunks["text"].tolist()
    sentence_ids, sentence_texts = sentences["sentence_id"].tolist(), sentences["text"].tolist()
    if ctx.settings.embed_texts.chunk_vectors == "embedded":
        rows = embedding_rows(ctx.doc_id, "chunk", chunk_ids, chunk_texts, ctx.embedder)
        rows += embedding_rows(ctx.doc_id, "sentence", sentence_ids, sentence_texts, ctx.embedder)
        return {"embeddings": rows}
    sentence_vectors = (
        ctx.embedder.embed(sentence_texts) if sentence_texts else np.zeros((0, 0), dtype=np.float32)
    )
    chunk_vectors = derived_chunk_vectors(
        chunk_ids,
        chunk_texts,
        sentences["chunk_id"].tolist(),
        sentence_texts,
        sentence_vectors,
        ctx.embedder,
    )
    name = ctx.embedder.name
    rows = _rows(ctx.doc_id, "chunk", chunk_ids, chunk_vectors, name)
    return {"embeddings": rows + _rows(ctx.doc_id, "sentence", sentence_ids, sentence_vectors, name)}
