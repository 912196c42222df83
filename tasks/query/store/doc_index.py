"""Everything query time needs about one document, loaded once through DuckDB queries over the
workspace views (`tasks.query.store.reader`): sections, chunks, sentences, their vectors and the
BM25 indexes."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from tasks.query.store.bm25 import Bm25Index
from tasks.query.store.reader import document_reader
from tasks.tables.io import Workspace
from tasks.tables.manifest import load_manifest


class DocumentNotBuilt(LookupError):
    """The workspace has no built document with this id."""


@dataclass
class DocumentIndex:
    doc_id: str
    title: str
    language: str
    kind: str
    sections: pd.DataFrame
    chunks: pd.DataFrame
    sentences: pd.DataFrame
    chunk_vectors: np.ndarray
    sentence_vectors: np.ndarray
    embedding_model: str | None
    chunk_bm25: Bm25Index
    sentence_bm25: Bm25Index

    @classmethod
    def load(cls, workspace: Workspace, doc_id: str) -> "DocumentIndex":
        reader = document_reader(workspace, doc_id)
        documents = reader.frame("documents", columns=["doc_id", "title", "language", "kind"])
        if documents.empty:
            raise DocumentNotBuilt(
                f"document {doc_id!r} is not in workspace {workspace.root.name!r} (see `nkw inspect`)"
            )
        ingest = load_manifest(workspace, doc_id).stages.get("ingest_documents")
        if ingest is not None and ingest.status == "failed":
            raise DocumentNotBuilt(
                f"document {doc_id!r} is not served: {ingest.error}; fix the input and build again"
            )
        info = documents.iloc[0]
        sections = reader.frame("sections").sort_values("ordinal").reset_index(drop=True)
        chunks = reader.frame("chunks").sort_values("ordinal").reset_index(drop=True)
        sentences = reader.frame("sentences").sort_values("ordinal").reset_index(drop=True)
        if chunks.empty:
            raise DocumentNotBuilt(f"document {doc_id!r} has no chunks yet; run `nkw build` again")
        orphans = int((~chunks["section_id"].isin(sections["section_id"])).sum())
        if orphans:
            # A sections partition (or its ledger record) that cannot be read hides the scenes while
            # the chunks stay: answering would fail deep inside a tool, so say what is damaged.
            raise DocumentNotBuilt(
                f"document {doc_id!r} is damaged: {orphans} chunk(s) point to sections that cannot be "
                "read (see `nkw inspect`); run `nkw build` again"
            )
        embeddings = reader.frame("embeddings")  # every vector of the document: convert once
        chunk_vectors, model = _vectors(embeddings, "chunk", chunks["chunk_id"].tolist())
        sentence_vectors, _ = _vectors(embeddings, "sentence", sentences["sentence_id"].tolist())
        postings = reader.table("term_postings")
        chunk_postings = postings.filter(pc.equal(postings["unit_kind"], "chunk"))
        sentence_postings = postings.filter(pc.equal(postings["unit_kind"], "sentence"))
        language = str(info["language"])
        return cls(
            doc_id=doc_id,
            title=str(info["title"]),
            language=language,
            kind=str(info["kind"]),
            sections=sections,
            chunks=chunks,
            sentences=sentences,
            chunk_vectors=chunk_vectors,
            sentence_vectors=sentence_vectors,
            embedding_model=model,
            chunk_bm25=Bm25Index.from_postings(chunk_postings, chunks["chunk_id"].tolist(), language),
            sentence_bm25=Bm25Index.from_postings(
                sentence_postings, sentences["sentence_id"].tolist(), language
            ),
        )

    @cached_property
    def sentence_rows(self) -> list[dict]:
        """The sentences as row dicts by position: tools read single rows without pandas indexing."""
        return self.sentences.to_dict("records")

    @cached_property
    def section_rows(self) -> list[dict]:
        return self.sections.to_dict("records")

    @cached_property
    def sentence_spans(self) -> tuple[np.ndarray, np.ndarray]:
        """(char_start, char_end) of every sentence, by position."""
        return self.sentences["char_start"].to_numpy(), self.sentences["char_end"].to_numpy()

    @cached_property
    def chunk_rows(self) -> list[dict]:
        return self.chunks.to_dict("records")

    @cached_property
    def sentence_groups(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sentence positions grouped by chunk, where each group starts, the group's chunk
        position): per-chunk reductions over sentence scores with one `reduceat`."""
        position = {chunk_id: row for row, chunk_id in enumerate(self.chunks["chunk_id"])}
        owner = np.array([position.get(c, -1) for c in self.sentences["chunk_id"]], dtype=np.int64)
        order = np.argsort(owner, kind="stable")
        order = order[owner[order] >= 0]
        owners = owner[order]
        starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]]) if len(owners) else owners
        return order, starts, owners[starts] if len(owners) else owners

    @cached_property
    def chunk_ids_of_section(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for chunk_id, section_id in zip(self.chunks["chunk_id"], self.chunks["section_id"]):
            found.setdefault(section_id, []).append(chunk_id)
        return found


def _vectors(embeddings: pd.DataFrame, unit_kind: str, unit_ids: list[str]) -> tuple[np.ndarray, str | None]:
    """Vectors aligned to `unit_ids` (zeros where missing) and the embedding model name."""
    frame = embeddings[embeddings["unit_kind"] == unit_kind]
    if frame.empty:
        return np.zeros((len(unit_ids), 1), dtype=np.float32), None
    by_id = dict(zip(frame["unit_id"], frame["vector"]))
    dimension = len(next(iter(by_id.values())))
    matrix = np.zeros((len(unit_ids), dimension), dtype=np.float32)
    for row, unit_id in enumerate(unit_ids):
        vector = by_id.get(unit_id)
        if vector is not None:
            matrix[row] = np.asarray(vector, dtype=np.float32)
    return matrix, str(frame["model"].iloc[0])
