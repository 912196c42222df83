"""The BM25 inverted index as a table: term frequencies per chunk and per sentence
(English: stemmed words without stopwords; Chinese: characters and character bigrams)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from tasks.stage import StageContext, StageOutput
from tasks.text import index_terms


def posting_rows(
    doc_id: str, unit_kind: str, unit_ids: list[str], texts: list[str], language: str
) -> list[dict[str, Any]]:
    rows = []
    for unit_id, text in zip(unit_ids, texts):
        terms = index_terms(text, language)
        for term, tf in sorted(Counter(terms).items()):
            rows.append(
                {
                    "doc_id": doc_id,
                    "unit_kind": unit_kind,
                    "unit_id": unit_id,
                    "term": term,
                    "tf": tf,
                    "unit_length": len(terms),
                }
            )
    return rows


def run(ctx: StageContext) -> StageOutput:
    language = ctx.document.language
    chunks, sentences = ctx.table("chunks"), ctx.table("sentences")
    rows = posting_rows(ctx.doc_id, "chunk", chunks["chunk_id"].tolist(), chunks["text"].tolist(), language)
    rows += posting_rows(
        ctx.doc_id, "sentence", sentences["sentence_id"].tolist(), sentences["text"].tolist(), language
    )
    return {"term_postings": rows}
