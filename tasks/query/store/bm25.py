"""BM25 scoring over the `term_postings` table (the index is built at build time)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from tasks.text import index_terms


@dataclass
class Bm25Index:
    unit_ids: list[str]
    postings: dict[str, tuple[np.ndarray, np.ndarray]]  # term -> (unit positions, term frequencies)
    lengths: np.ndarray
    language: str
    k1: float = 1.2
    b: float = 0.75
    _memo: dict[str, np.ndarray] = field(default_factory=dict, repr=False)  # recent queries' scores

    MEMO_SIZE = 256

    @classmethod
    def from_postings(cls, rows: pa.Table, unit_ids: list[str], language: str) -> "Bm25Index":
        """Index the postings of the given units (their order defines result positions)."""
        position = {unit_id: i for i, unit_id in enumerate(unit_ids)}
        lengths = np.zeros(len(unit_ids), dtype=np.float32)
        grouped: dict[str, tuple[list[int], list[int]]] = {}
        for unit_id, term, tf, length in zip(
            rows.column("unit_id").to_pylist(),
            rows.column("term").to_pylist(),
            rows.column("tf").to_pylist(),
            rows.column("unit_length").to_pylist(),
        ):
            index = position.get(unit_id)
            if index is None:
                continue
            lengths[index] = length
            units, tfs = grouped.setdefault(term, ([], []))
            units.append(index)
            tfs.append(tf)
        postings = {
            term: (np.array(u, dtype=np.int64), np.array(t, dtype=np.float32))
            for term, (u, t) in grouped.items()
        }
        return cls(unit_ids, postings, lengths, language)

    @classmethod
    def from_texts(cls, unit_ids: list[str], texts: list[str], language: str) -> "Bm25Index":
        """Index short texts directly (asset descriptions, facts) at load time."""
        grouped: dict[str, tuple[list[int], list[int]]] = {}
        lengths = np.zeros(len(unit_ids), dtype=np.float32)
        for index, text in enumerate(texts):
            counts = Counter(index_terms(text, language))
            lengths[index] = sum(counts.values())
            for term, tf in counts.items():
                units, tfs = grouped.setdefault(term, ([], []))
                units.append(index)
                tfs.append(tf)
        postings = {
            term: (np.array(u, dtype=np.int64), np.array(t, dtype=np.float32))
            for term, (u, t) in grouped.items()
        }
        return cls(list(unit_ids), postings, lengths, language)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every unit for `query` (zeros when no term matches); repeated queries
        (the same question scored for several chunks or tools) are computed once."""
        found = self._memo.get(query)
        if found is None:
            found = self._score(query)
            if len(self._memo) >= self.MEMO_SIZE:
                self._memo.pop(next(iter(self._memo)))
            self._memo[query] = found
        return found.copy()

    def _score(self, query: str) -> np.ndarray:
        total = np.zeros(len(self.unit_ids), dtype=np.float32)
        if not self.unit_ids:
            return total
        average = float(self.lengths.mean()) or 1.0
        n = len(self.unit_ids)
        for term, count in Counter(index_terms(query, self.language)).items():
            hit = self.postings.get(term)
            if hit is None:
                continue
            units, tfs = hit
            idf = math.log(1.0 + (n - len(units) + 0.5) / (len(units) + 0.5))
            norm = tfs + self.k1 * (1 - self.b + self.b * self.lengths[units] / average)
            total[units] += count * idf * tfs * (self.k1 + 1) / norm
        return total
