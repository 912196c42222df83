"""Embed every chunk and sentence of a document (batched) into the `embeddings` table."""

from __future__ import annotations

from typing import Any

import numpy as np

from tasks.stage import StageContext, StageOutput
from tasks.embeddings import Embedder


def embedding_rows(
    doc_id: str, unit_kind: str, unit_ids: list[str], texts: list[str], embedder: Embedder
) -> list[dict[str, Any]]:
    vectors = embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    return [
        {
            "doc_id": doc_id,
            "unit_kind": unit_kind,
            "unit_id": unit_id,
            "model": embedder.name,
            "vector": vector.tolist(),
        }
        for unit_id, vector in zip(unit_ids, vectors)
    ]


def run(ctx: StageContext) -> StageOutput:
    if ctx.embedder is None:
        raise RuntimeError("embed_texts needs an embedder")
    chunks, sentences = ctx.table("chunks"), ctx.table("sentences")
    rows = embedding_rows(
        ctx.doc_id, "chunk", chunks["chunk_id"].tolist(), chunks["text"].tolist(), ctx.embedder
    )
    rows += embedding_rows(
        ctx.doc_id, "sentence", sentences["sentence_id"].tolist(), sentences["text"].tolist(), ctx.embedder
    )
    return {"embeddings": rows}
