"""Any sentence-transformers model from a local folder (e.g. a multilingual model for Chinese text),
loaded once, on first use. The default MiniLM keeps its own fast path (tasks.encoders.minilm);
sentence-transformers and transformers are imported here only when such a model is configured."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Sequence

import numpy as np

DEFAULT_MODEL = "all-MiniLM-L6-v2"  # served by tasks.encoders.minilm, not by this module


def is_model_path(model: str) -> bool:
    """Whether `[embed_texts] model` names a model of its own rather than the bundled MiniLM."""
    return model != DEFAULT_MODEL


class SentenceTransformerEncoder:
    """`SentenceTransformer(path)` on the CPU, never reaching for a model hub."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._model: Any = None
        self._lock = threading.Lock()

    def load(self) -> Any:
        with self._lock:
            if self._model is None:
                if not Path(self.path).expanduser().is_dir():
                    raise ValueError(
                        f"embedding model folder not found: {self.path} ([embed_texts] model names a "
                        "sentence-transformers model folder, or all-MiniLM-L6-v2 for the bundled one)"
                    )
                from sentence_transformers import SentenceTransformer  # ~10 s of imports: only here

                self._model = SentenceTransformer(
                    str(Path(self.path).expanduser()), device="cpu", local_files_only=True
                )
        return self._model

    def dimension(self) -> int:
        model = self.load()
        # sentence-transformers 6 renamed the method; older releases have only the first name.
        size = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(size())

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dimension()), dtype=np.float32)
        vectors = self.load().encode(
            list(texts),
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
