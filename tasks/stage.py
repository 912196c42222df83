"""What a stage's `run` receives: one document's input tables, settings and injected clients.

A stage module exposes `run(ctx) -> {table: rows}`; the orchestrator (flows.build_corpus)
reads the inputs, checks the manifest, writes the outputs and checks contracts, so stage
code never touches paths, Prefect or the clock.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import pandas as pd

from schemas.config import Settings
from schemas.ids import sha256_text, stable_hash
from tasks.text import count_words

if TYPE_CHECKING:
    from tasks.embeddings import Embedder
    from tasks.llm.client.protocol import LLMClient


@dataclass(frozen=True)
class RawDocument:
    doc_id: str
    title: str
    text: str
    language: str
    kind: str
    source: str
    encoding: str = "utf-8"
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def content_sha256(self) -> str:
        return sha256_text(self.text)

    @property
    def owner_key(self) -> str:
        """What makes two inputs the same document: the file, or the file and its record id."""
        path, _, line = self.source.partition("#line=")
        return f"{path}#{self.meta.get('raw_doc_id', self.doc_id)}" if line else path

    @property
    def fingerprint(self) -> str:
        """Everything about the input that can change what is built from it."""
        return stable_hash(
            self.doc_id,
            self.title,
            self.content_sha256,
            self.language,
            self.kind,
            self.meta.get("section_texts"),
            length=32,
        )

    def to_row(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "title": self.title,
            "language": self.language,
            "kind": self.kind,
            "source": self.source,
            "content_sha256": self.content_sha256,
            "n_chars": len(self.text),
            "n_words": count_words(self.text, self.language),
            "encoding": self.encoding,
            "meta": json.dumps(self.meta, ensure_ascii=False, sort_keys=True),
            "text": self.text,
        }


@dataclass(frozen=True)
class DocumentInfo:
    doc_id: str
    title: str
    language: str
    kind: str
    text: str

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "DocumentInfo":
        return cls(
            doc_id=row["doc_id"],
            title=row["title"],
            language=row["language"],
            kind=row["kind"],
            text=row["text"],
        )


@dataclass
class StageContext:
    stage: str
    doc_id: str
    settings: Settings
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    raw: "RawDocument | None" = None
    embedder: "Embedder | None" = None
    llm: "LLMClient | None" = None
    # (raw document, documents frame) -> info: stages read `document` inside per-item loops
    _document: tuple[Any, Any, DocumentInfo] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @property
    def document(self) -> DocumentInfo:
        source = self.raw if self.raw is not None else self.tables["documents"]
        cached = self._document
        if cached is not None and cached[0] is self.raw and cached[1] is source:
            return cached[2]
        if self.raw is not None:
            raw = self.raw
            info = DocumentInfo(raw.doc_id, raw.title, raw.language, raw.kind, raw.text)
        else:
            info = DocumentInfo.from_row(source.iloc[0].to_dict())
        self._document = (self.raw, source, info)
        return info

    def table(self, name: str) -> pd.DataFrame:
        return self.tables[name]


# Table name -> DataFrame, Arrow table or row dicts; plus optional "_warnings" (list of str) and
# "_details" (figures kept in the manifest, e.g. candidate pairs considered).
StageOutput = dict[str, Any]


def failure_row(ctx: StageContext, item_id: str, error: str, payload: str = "") -> dict[str, str]:
    """One `failures` row: an item this stage could not process, and why."""
    return {"doc_id": ctx.doc_id, "stage": ctx.stage, "item_id": item_id, "error": error, "payload": payload}
