"""Search over one kind of narrative asset (facts, entities, events, episodes, ...): dense
similarity from the stored asset vectors blended with BM25 over the asset texts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from tasks.query.store.ranking import top_positions
from tasks.query.store.bm25 import Bm25Index

DENSE_WEIGHT = 0.6  # dense carries paraphrase; lexical keeps names and rare words decisive


@dataclass
class AssetIndex:
    kind: str
    ids: list[str]
    texts: list[str]
    vectors: np.ndarray
    bm25: Bm25Index

    @classmethod
    def build(cls, kind: str, frame: pd.DataFrame, language: str) -> "AssetIndex":
        """From `asset_embeddings` rows of one kind (ids, texts, vectors)."""
        frame = frame[frame["unit_kind"] == kind].sort_values("unit_id")
        ids, texts = frame["unit_id"].tolist(), frame["text"].tolist()
        vectors = (
            np.array(frame["vector"].tolist(), dtype=np.float32)
            if len(frame)
            else np.zeros((0, 1), dtype=np.float32)
        )
        return cls(kind, ids, texts, vectors, Bm25Index.from_texts(ids, texts, language))

    @property
    def position(self) -> dict[str, int]:
        if not hasattr(self, "_position"):
            self._position = {unit_id: i for i, unit_id in enumerate(self.ids)}
        return self._position

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query: str, query_vector: np.ndarray | None) -> np.ndarray:
        """A blended relevance score per asset, each part normalised to [0, 1]."""
        if not self.ids:
            return np.zeros(0, dtype=np.float32)
        lexical = self.bm25.scores(query)
        top = float(lexical.max())
        lexical = lexical / top if top > 0 else lexical
        if query_vector is None or self.vectors.shape[1] != query_vector.shape[-1]:
            return lexical
        dense = np.clip(self.vectors @ query_vector.reshape(-1), 0, None)
        return DENSE_WEIGHT * dense + (1 - DENSE_WEIGHT) * lexical

    def search(
        self, query: str, query_vector: np.ndarray | None, k: int, allowed: set[str] | None = None
    ) -> list[tuple[str, float]]:
        """The k best (id, score) pairs, optionally restricted to `allowed` ids."""
        scores = self.scores(query, query_vector)
        if allowed is not None:
            mask = np.array([i in allowed for i in self.ids], dtype=bool)
            scores = np.where(mask, scores, -1.0)
        return [(self.ids[p], float(scores[p])) for p in top_positions(scores, k) if scores[p] >= 0]
