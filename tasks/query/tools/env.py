"""The environment every tool call runs in: one document's store and a cached query embedder."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from tasks.query.hybrid.fine_windows import FineWindows, build_windows
from tasks.query.store.document_store import NarrativeStore


@dataclass
class ToolEnv:
    store: NarrativeStore
    embed_texts: Callable[[Sequence[str]], np.ndarray] | None = None
    # Ablations (paper §4.3): False hides episodes and storylines from every tool / hides entity
    # attributes and the attribute-built profile summaries (atomic facts stay).
    hierarchy: bool = True
    attributes: bool = True
    dense_chunk_score: str = "best_sentence"  # [retrieval] dense_chunk_score of the text channel
    # The session's windows when it keeps them (the query engine's, shared with the hybrid_fine
    # baseline and scored as `[retrieval] dense_window_score` says); else built here, unembedded.
    windows_source: Callable[[], FineWindows] | None = None
    _vectors: dict[str, np.ndarray | None] = field(default_factory=dict)
    _windows: FineWindows | None = None

    def vector(self, text: str) -> np.ndarray | None:
        """The query vector for `text`, embedded once per session (None without an embedder)."""
        if text not in self._vectors:
            self._vectors[text] = self.embed_texts([text])[0] if self.embed_texts is not None else None
        return self._vectors[text]

    def fine_windows(self) -> FineWindows:
        """The document's ~40-word windows and their BM25 index (the text ranking that fills what
        the board leaves of the budget), built once per session."""
        if self._windows is None:
            self._windows = (
                self.windows_source()
                if self.windows_source is not None
                else build_windows(self.store.source.sentences, self.store.source.language)
            )
        return self._windows
