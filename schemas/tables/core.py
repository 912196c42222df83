"""Every workspace table, declared once: pyarrow schema, key, grain and contracts.

All writes go through `tasks.tables.io.write_table`, which casts to these schemas and
rejects missing or unknown columns. Contracts (unique keys, not-null, accepted values,
foreign keys, invariants) are checked in DuckDB after each write.
"""

from __future__ import annotations

from schemas.tables.spec import (BOOL, FLOAT, INT, SPAN_INVARIANT, STR, STR_LIST, TABLES, VECTOR, ForeignKey,
                                 TableSpec, register, schema, spec)

# --- ingestion and segmentation -------------------------------------------------------

register(TableSpec(
    name="documents",
    grain="one row per ingested document",
    key=("doc_id",),
    schema=schema(
        ("doc_id", STR), ("title", STR), ("language", STR), ("kind", STR), ("source", STR),
        ("content_sha256", STR), ("n_chars", INT), ("n_words", INT), ("encoding", STR),
        ("meta_json", STR), ("text", STR),
    ),
    not_null=("doc_id", "title", "language", "kind", "source", "content_sha256", "n_chars", "text"),
    accepted_values={"language": ("en", "zh"), "kind": ("screenplay", "prose")},
))

register(TableSpec(
    name="sections",
    grain="one row per scene (screenplay) or chapter / section / paragraph group (prose)",
    key=("section_id",),
    schema=schema(
        ("section_id", STR), ("doc_id", STR), ("ordinal", INT), ("heading", STR),
        ("section_kind", STR), ("scene_number", STR), ("interior", STR), ("location", STR),
        ("time_of_day", STR), ("char_start", INT), ("char_end", INT), ("text", STR),
    ),
    not_null=("section_id", "doc_id", "ordinal", "heading", "section_kind", "char_start", "char_end"),
    accepted_values={"section_kind": ("scene", "chapter", "section", "paragraphs", "preamble")},
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="chunks",
    grain="one row per retrieval chunk (about 600 tokens, inside one section)",
    key=("chunk_id",),
    schema=schema(
        ("chunk_id", STR), ("doc_id", STR), ("section_id", STR), ("ordinal", INT), ("text", STR),
        ("char_start", INT), ("char_end", INT), ("n_tokens", INT),
    ),
    not_null=("chunk_id", "doc_id", "section_id", "ordinal", "text", "char_start", "char_end", "n_tokens"),
    foreign_keys=(ForeignKey("section_id", "sections", "section_id", nullable=False),),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="sentences",
    grain="one row per sentence (dialogue sentences carry their speaker cue)",
    key=("sentence_id",),
    schema=schema(
        ("sentence_id", STR), ("doc_id", STR), ("chunk_id", STR), ("section_id", STR),
        ("ordinal", INT), ("text", STR), ("speaker", STR), ("char_start", INT), ("char_end", INT),
    ),
    not_null=("sentence_id", "doc_id", "chunk_id", "section_id", "ordinal", "text", "char_start", "char_end"),
    foreign_keys=(
        ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
        ForeignKey("section_id", "sections", "section_id", nullable=False),
    ),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="embeddings",
    grain="one row per embedded unit (chunk or sentence) and embedding model",
    key=("unit_kind", "unit_id", "model"),
    schema=schema(("doc_id", STR), ("unit_kind", STR), ("unit_id", STR), ("model", STR), ("vector", VECTOR)),
    not_null=("doc_id", "unit_kind", "unit_id", "model", "vector"),
    accepted_values={"unit_kind": ("chunk", "sentence")},
))

register(TableSpec(
    name="term_postings",
    grain="one row per (unit, term): the BM25 inverted index over chunks and sentences",
    key=("unit_kind", "unit_id", "term"),
    schema=schema(("doc_id", STR), ("unit_kind", STR), ("unit_id", STR), ("term", STR), ("tf", INT), ("unit_length", INT)),
    not_null=("doc_id", "unit_kind", "unit_id", "term", "tf", "unit_length"),
    accepted_values={"unit_kind": ("chunk", "sentence")},
))

# --- accounting -----------------------------------------------------------------------

register(TableSpec(
    name="failures",
    grain="one row per quarantined item (a document, chunk or LLM item that could not be processed)",
    key=("doc_id", "stage", "item_id"),
    partition="document_stage",
    schema=schema(("doc_id", STR), ("stage", STR), ("item_id", STR), ("error", STR), ("payload", STR)),
    not_null=("doc_id", "stage", "item_id", "error"),
))

register(TableSpec(
    name="llm_calls",
    grain="one row per LLM request attempt (cache hits included, marked status 'cached')",
    key=("stage", "item_id", "call_key", "attempt"),
    partition="document_stage",
    schema=schema(
        ("call_key", STR), ("attempt", INT), ("doc_id", STR), ("stage", STR), ("item_id", STR),
        ("prompt_id", STR), ("prompt_version", STR), ("prompt_hash", STR), ("model", STR),
        ("prompt_tokens", INT), ("completion_tokens", INT), ("latency_ms", FLOAT),
        ("finish_reason", STR), ("status", STR), ("error", STR),
    ),
    not_null=("call_key", "attempt", "stage", "item_id", "status"),
    accepted_values={"status": ("ok", "cached", "error", "invalid", "truncated", "timeout", "refused")},
))


# --- query and evaluation ---------------------------------------------------------------

register(TableSpec(
    name="qa_answers",
    grain="one row per (run, question, sample): an answer with its evidence and scores",
    key=("run_id", "qid", "sample"),
    partition="run",
    schema=schema(
        ("run_id", STR), ("benchmark", STR), ("qid", STR), ("doc_id", STR), ("system", STR), ("sample", INT),
        ("qtype", STR), ("question", STR), ("answer", STR), ("reference", STR), ("is_offline", BOOL),
        ("chosen_option", INT), ("gold_option", INT), ("is_correct_option", BOOL), ("rouge_l_f1", FLOAT),
        ("gold_section_ids", STR_LIST), ("evidence_section_ids", STR_LIST), ("evidence_recall", FLOAT),
        ("evidence_tokens", INT), ("cited_headings", STR_LIST), ("latency_ms", FLOAT), ("status", STR),
        ("board_json", STR), ("skills", STR_LIST), ("tool_calls", INT),
        # the document's language, and the gold scenes that could not be mapped to sections (the
        # question is then left out of evidence recall and reported)
        ("language", STR), ("gold_unmapped", STR_LIST),
    ),
    not_null=("run_id", "benchmark", "qid", "doc_id", "system", "sample", "question", "status"),
    accepted_values={"status": ("answered", "document_missing", "error")},
))

register(TableSpec(
    name="qa_traces",
    grain="one row per tool call made while answering a question",
    key=("run_id", "qid", "sample", "call_index"),
    partition="run",
    schema=schema(
        ("run_id", STR), ("qid", STR), ("sample", INT), ("call_index", INT), ("round", INT), ("tool", STR),
        ("arguments", STR), ("rows", INT), ("tokens", INT), ("ms", FLOAT),
    ),
    not_null=("run_id", "qid", "sample", "call_index", "round", "tool"),
))

register(TableSpec(
    name="eval_metrics",
    grain="one row per (run, qtype, metric); qtype '*' is the whole benchmark",
    key=("run_id", "qtype", "metric"),
    partition="run",
    schema=schema(("run_id", STR), ("benchmark", STR), ("system", STR), ("qtype", STR), ("metric", STR),
                   ("value", FLOAT), ("n", INT)),
    not_null=("run_id", "benchmark", "system", "qtype", "metric", "n"),
))
