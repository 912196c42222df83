"""Embed each text once: a workspace vector store keyed by (model, text hash), shared by
every stage of a build and by query time.

`CachingEmbedder` wraps any embedder with the same `name` (so tables and fingerprints are
unchanged): texts already in the store are served from it, the rest are embedded in one
batch and added. New vectors are written by `flush` as one shard file per flush under
`<workspace>/cache/vectors/<model>/`, atomically, so a killed build loses only unflushed
vectors, never the store. Shards are read on first use.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import threading
from pathlib import Path
from typing import Sequence

import numpy as np

from tasks.embeddings import Embedder
from tasks.files import open_regular

KEY_BYTES = 16


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=KEY_BYTES).digest()


def _folder_name(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model)


class VectorStore:
    """Vectors of one model by text hash, in memory, backed by shard files in `folder`."""

    def __init__(self, folder: Path | None, model: str) -> None:
        self.folder = folder / _folder_name(model) if folder is not None else None
        self.model = model
        self._vectors: dict[bytes, np.ndarray] = {}
        self._new: dict[bytes, np.ndarray] = {}
        self._loaded = False
        self._lock = threading.Lock()

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        if self.folder is None or not self.folder.is_dir():
            return
        for shard in sorted(self.folder.glob("*.npz")):
            try:
                with open_regular(shard) as handle, np.load(handle) as data:
                    keys, vectors = data["keys"], data["vectors"]
            except (OSError, ValueError, KeyError):
                continue  # an unreadable shard only costs its vectors being embedded again
            for key, vector in zip(keys, vectors):
                self._vectors.setdefault(bytes(key), vector)

    def get_many(self, keys: Sequence[bytes]) -> list[np.ndarray | None]:
        with self._lock:
            self._load()
            return [self._vectors.get(k) for k in keys]

    def put_many(self, keys: Sequence[bytes], vectors: np.ndarray) -> None:
        with self._lock:
            self._load()
            for key, vector in zip(keys, vectors):
                if key not in self._vectors:
                    self._vectors[key] = vector
                    self._new[key] = vector

    def __len__(self) -> int:
        with self._lock:
            self._load()
            return len(self._vectors)

    def flush(self) -> int:
        """Write the vectors added since the last flush as one shard; returns how many."""
        with self._lock:
            if not self._new or self.folder is None:
                self._new.clear()
                return 0
            keys = sorted(self._new)
            matrix = np.stack([self._new[k] for k in keys]).astype(np.float32)
            key_array = np.frombuffer(b"".join(keys), dtype=f"S{KEY_BYTES}")
            name = hashlib.blake2b(b"".join(keys), digest_size=10).hexdigest()
            self.folder.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
            with os.fdopen(handle, "wb") as stream:
                np.savez(stream, keys=key_array, vectors=matrix)
            os.replace(temporary, self.folder / f"{name}.npz")
            count = len(keys)
            self._new.clear()
            return count


class CachingEmbedder:
    """An embedder that embeds only the texts its store has not seen (duplicates within a call once).

    Stages of a document run side by side: a text another call is embedding right now is not
    embedded again; the call first embeds its own new texts, then waits for those vectors."""

    def __init__(self, inner: Embedder, store: VectorStore) -> None:
        self.inner = inner
        self.name = inner.name
        self.store = store
        self.embedded_texts = 0  # texts sent to the model, for benchmarks
        self.served_texts = 0  # texts answered from the store
        self._pending: dict[bytes, threading.Event] = {}  # texts some call is embedding now
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return self.inner.embed(texts)
        keys = [text_key(t) for t in texts]
        with self._lock:  # claim the missing texts no other call is embedding
            found = self.store.get_many(keys)
            own: dict[bytes, str] = {}
            others: dict[bytes, threading.Event] = {}
            for key, text, vector in zip(keys, texts, found):
                if vector is not None or key in own or key in others:
                    continue
                if key in self._pending:
                    others[key] = self._pending[key]
                else:
                    own[key] = text
                    self._pending[key] = threading.Event()
        fresh: dict[bytes, np.ndarray] = {}
        try:
            if own:
                fresh.update(zip(own, self.inner.embed(list(own.values()))))
                self.store.put_many(list(fresh), np.stack(list(fresh.values())))
        finally:
            with self._lock:
                for key in own:
                    self._pending.pop(key).set()
        for event in others.values():
            event.wait()
        if others:  # vectors another call added (embedded here after all if that call failed)
            late = dict(zip(others, self.store.get_many(list(others))))
            lost = {key: text for key, text in zip(keys, texts) if key in late and late[key] is None}
            if lost:
                late.update(zip(lost, self.inner.embed(list(lost.values()))))
                self.store.put_many(list(lost), np.stack([late[k] for k in lost]))
            fresh.update(late)
        found = [v if v is not None else fresh[k] for k, v in zip(keys, found)]
        self.embedded_texts += len(own)
        self.served_texts += len(texts) - len(own)
        return np.stack(found).astype(np.float32)

    def flush(self) -> int:
        return self.store.flush()

    def prepare(self) -> None:
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            prepare()


def caching(embedder: Embedder | None, folder: Path | None) -> Embedder | None:
    """`embedder` behind the workspace store; the hashing embedder (cheaper than a look-up) stays bare."""
    if embedder is None or embedder.name.startswith("hashing:") or isinstance(embedder, CachingEmbedder):
        return embedder
    return CachingEmbedder(embedder, VectorStore(folder, embedder.name))
