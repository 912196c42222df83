"""Answer questions over a built workspace. `QueryEngine` keeps loaded documents and the
query embedder for a session (one `nkw ask`, or a whole evaluation run). No Prefect here:
interactive commands never wait for a server."""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from schemas.config import Settings
from tasks.answer_hybrid import answer_hybrid
from tasks.answer_types import Answer
from tasks.doc_index import DocumentIndex
from tasks.embeddings import Embedder, embedder_for_identity
from tasks.tables import Workspace

SYSTEMS = ("hybrid",)


class QueryEngine:
    def __init__(self, workspace: Workspace, settings: Settings,
                 embedder_factory: Callable[[str | None], Embedder | None] | None = None) -> None:
        self.workspace = workspace
        self.settings = settings
        self._indexes: dict[str, DocumentIndex] = {}
        self._embedders: dict[str | None, Embedder | None] = {}
        self._embedder_factory = embedder_factory or (lambda identity: embedder_for_identity(identity, settings.embed_texts))

    def index(self, doc_id: str) -> DocumentIndex:
        if doc_id not in self._indexes:
            self._indexes[doc_id] = DocumentIndex.load(self.workspace, doc_id)
        return self._indexes[doc_id]

    def embedder(self, identity: str | None) -> Embedder | None:
        """The embedder matching the document's stored vectors (loaded once per session)."""
        if identity not in self._embedders:
            self._embedders[identity] = self._embedder_factory(identity)
        return self._embedders[identity]

    def ask(self, doc_id: str, question: str, options: list[str] | None = None, system: str = "hybrid") -> Answer:
        if system not in SYSTEMS:
            raise ValueError(f"unknown system {system!r}; choose one of {', '.join(SYSTEMS)}")
        index = self.index(doc_id)
        embedder = self.embedder(index.embedding_model)
        started = time.perf_counter()
        query_vector = embedder.embed([question])[0] if embedder is not None else None
        embed = embedder.embed if embedder is not None else None
        answer = answer_hybrid(index, question, options or None, query_vector, embed, self.settings.retrieval)
        answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
        return answer


def warm_up(engine: QueryEngine, doc_id: str) -> None:
    """Load the document and its embedder so the first timed question does not pay for it."""
    index = engine.index(doc_id)
    embedder = engine.embedder(index.embedding_model)
    if embedder is not None:
        embedder.embed(["warm up"])


