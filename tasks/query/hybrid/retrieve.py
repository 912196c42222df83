"""Hybrid retrieval (the paper's "Hybrid RAG" baseline): BM25 and dense search over chunks,
fused by reciprocal rank."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from schemas.config import RetrievalSettings
from tasks.query.store.ranking import top_positions
from tasks.query.store.doc_index import DocumentIndex


@dataclass(frozen=True)
class RankedChunk:
    position: int  # row in DocumentIndex.chunks
    score: float
    bm25_rank: int | None
    dense_rank: int | None


def reciprocal_rank_fusion(rankings: list[list[int]], rrf_k: int) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, position in enumerate(ranking):
            fused[position] = fused.get(position, 0.0) + 1.0 / (rrf_k + rank + 1)
    return fused


def dense_chunk_scores(
    index: DocumentIndex, query_vector: np.ndarray | None, dense_score: str = "best_sentence"
) -> np.ndarray | None:
    """Each chunk's similarity to the query vector (None without comparable vectors).

    best_sentence: its most similar sentence's (the sentence vectors are there anyway, and a
    chunk's own vector, embedded or derived, blurs a chunk whose one sentence answers); chunk:
    its own vector's. A chunk without sentences falls back on its own vector."""
    if query_vector is None or index.chunk_vectors.shape[1] != query_vector.shape[-1]:
        return None
    query = query_vector.reshape(-1)
    scores = index.chunk_vectors @ query
    if dense_score == "chunk" or index.sentence_vectors.shape[1] != query.shape[-1]:
        return scores
    order, starts, chunks = index.sentence_groups
    if len(order):
        # einsum, not BLAS: a threaded matrix-vector product waits for worker threads to wake
        # after each query's model call (~6 ms against 0.7 ms for 2,485 sentences on a busy host)
        similarity = np.einsum("ij,j->i", index.sentence_vectors, query)
        scores[chunks] = np.maximum.reduceat(similarity[order], starts)
    return scores


def hybrid_search(
    index: DocumentIndex,
    question: str,
    query_vector: np.ndarray | None,
    top_k: int,
    candidates: int,
    rrf_k: int,
    dense_score: str = "best_sentence",
) -> list[RankedChunk]:
    """The top_k chunks for `question` by RRF over BM25 and (when vectors exist) dense ranks."""
    bm25 = index.chunk_bm25.scores(question)
    bm25_ranking = [p for p in top_positions(bm25, candidates) if bm25[p] > 0]
    rankings = [bm25_ranking]
    dense_ranking: list[int] = []
    dense = dense_chunk_scores(index, query_vector, dense_score)
    if dense is not None:
        dense_ranking = top_positions(dense, candidates)
        rankings.append(dense_ranking)
    fused = reciprocal_rank_fusion(rankings, rrf_k)
    bm25_rank = {p: r for r, p in enumerate(bm25_ranking)}
    dense_rank = {p: r for r, p in enumerate(dense_ranking)}
    ordered = sorted(fused.items(), key=lambda item: (-item[1], item[0]))[:top_k]
    return [RankedChunk(p, s, bm25_rank.get(p), dense_rank.get(p)) for p, s in ordered]


def hybrid_top_chunks(
    index: DocumentIndex, question: str, query_vector: np.ndarray | None, settings: RetrievalSettings
) -> list[RankedChunk]:
    """The baseline's top-k chunks for `question` under the `[retrieval]` settings."""
    return hybrid_search(
        index,
        question,
        query_vector,
        settings.top_k_chunks,
        settings.candidates,
        settings.rrf_k,
        settings.dense_chunk_score,
    )
