"""Every workspace table, declared once: pyarrow schema, key, grain and contracts.

All writes go through `tasks.tables.write_table`, which casts to these schemas and
rejects missing or unknown columns. Contracts (unique keys, not-null, accepted values,
foreign keys, invariants) are checked in DuckDB after each write.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

STR = pa.string()
INT = pa.int64()
FLOAT = pa.float64()
BOOL = pa.bool_()
STR_LIST = pa.list_(pa.string())
VECTOR = pa.list_(pa.float32())


@dataclass(frozen=True)
class ForeignKey:
    """`column` (scalar or list of ids) must resolve to `ref_table.ref_column` in the same document."""

    column: str
    ref_table: str
    ref_column: str
    is_list: bool = False
    nullable: bool = True


@dataclass(frozen=True)
class TableSpec:
    name: str
    schema: pa.Schema
    key: tuple[str, ...]
    grain: str
    # "document": one Parquet file per document; "document_stage": one per (document, stage)
    # for tables several stages append to; "run": one per query/evaluation run.
    partition: str = "document"
    not_null: tuple[str, ...] = ()
    accepted_values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    foreign_keys: tuple[ForeignKey, ...] = ()
    # SQL invariants: each query returns offending rows; `{t}` is this table's relation.
    invariants: tuple[tuple[str, str], ...] = ()

    @property
    def columns(self) -> list[str]:
        return self.schema.names


def _schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, dtype) for name, dtype in fields])


SPAN_INVARIANT = ("span inside document", "SELECT * FROM {t} WHERE char_start < 0 OR char_end < char_start")

TABLES: dict[str, TableSpec] = {}


def _register(spec: TableSpec) -> TableSpec:
    TABLES[spec.name] = spec
    return spec


# --- ingestion and segmentation -------------------------------------------------------

_register(TableSpec(
    name="documents",
    grain="one row per ingested document",
    key=("doc_id",),
    schema=_schema(
        ("doc_id", STR), ("title", STR), ("language", STR), ("kind", STR), ("source", STR),
        ("content_sha256", STR), ("n_chars", INT), ("n_words", INT), ("encoding", STR),
        ("meta_json", STR), ("text", STR),
    ),
    not_null=("doc_id", "title", "language", "kind", "source", "content_sha256", "n_chars", "text"),
    accepted_values={"language": ("en", "zh"), "kind": ("screenplay", "prose")},
))

_register(TableSpec(
    name="sections",
    grain="one row per scene (screenplay) or chapter / section / paragraph group (prose)",
    key=("section_id",),
    schema=_schema(
        ("section_id", STR), ("doc_id", STR), ("ordinal", INT), ("heading", STR),
        ("section_kind", STR), ("scene_number", STR), ("interior", STR), ("location", STR),
        ("time_of_day", STR), ("char_start", INT), ("char_end", INT), ("text", STR),
    ),
    not_null=("section_id", "doc_id", "ordinal", "heading", "section_kind", "char_start", "char_end"),
    accepted_values={"section_kind": ("scene", "chapter", "section", "paragraphs", "preamble")},
    invariants=(SPAN_INVARIANT,),
))

_register(TableSpec(
    name="chunks",
    grain="one row per retrieval chunk (about 600 tokens, inside one section)",
    key=("chunk_id",),
    schema=_schema(
        ("chunk_id", STR), ("doc_id", STR), ("section_id", STR), ("ordinal", INT), ("text", STR),
        ("char_start", INT), ("char_end", INT), ("n_tokens", INT),
    ),
    not_null=("chunk_id", "doc_id", "section_id", "ordinal", "text", "char_start", "char_end", "n_tokens"),
    foreign_keys=(ForeignKey("section_id", "sections", "section_id", nullable=False),),
    invariants=(SPAN_INVARIANT,),
))

_register(TableSpec(
    name="sentences",
    grain="one row per sentence (dialogue sentences carry their speaker cue)",
    key=("sentence_id",),
    schema=_schema(
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

_register(TableSpec(
    name="embeddings",
    grain="one row per embedded unit (chunk or sentence) and embedding model",
    key=("unit_kind", "unit_id", "model"),
    schema=_schema(("doc_id", STR), ("unit_kind", STR), ("unit_id", STR), ("model", STR), ("vector", VECTOR)),
    not_null=("doc_id", "unit_kind", "unit_id", "model", "vector"),
    accepted_values={"unit_kind": ("chunk", "sentence")},
))

_register(TableSpec(
    name="term_postings",
    grain="one row per (unit, term): the BM25 inverted index over chunks and sentences",
    key=("unit_kind", "unit_id", "term"),
    schema=_schema(("doc_id", STR), ("unit_kind", STR), ("unit_id", STR), ("term", STR), ("tf", INT), ("unit_length", INT)),
    not_null=("doc_id", "unit_kind", "unit_id", "term", "tf", "unit_length"),
    accepted_values={"unit_kind": ("chunk", "sentence")},
))

# --- accounting -----------------------------------------------------------------------

_register(TableSpec(
    name="failures",
    grain="one row per quarantined item (a document, chunk or LLM item that could not be processed)",
    key=("doc_id", "stage", "item_id"),
    partition="document_stage",
    schema=_schema(("doc_id", STR), ("stage", STR), ("item_id", STR), ("error", STR), ("payload", STR)),
    not_null=("doc_id", "stage", "item_id", "error"),
))

_register(TableSpec(
    name="llm_calls",
    grain="one row per LLM request attempt (cache hits included, marked status 'cached')",
    key=("stage", "item_id", "call_key", "attempt"),
    partition="document_stage",
    schema=_schema(
        ("call_key", STR), ("attempt", INT), ("doc_id", STR), ("stage", STR), ("item_id", STR),
        ("prompt_id", STR), ("prompt_version", STR), ("prompt_hash", STR), ("model", STR),
        ("prompt_tokens", INT), ("completion_tokens", INT), ("latency_ms", FLOAT),
        ("finish_reason", STR), ("status", STR), ("error", STR),
    ),
    not_null=("call_key", "attempt", "stage", "item_id", "status"),
    accepted_values={"status": ("ok", "cached", "error", "invalid", "truncated", "timeout", "refused")},
))


def spec(name: str) -> TableSpec:
    """The declared spec of table `name`; a KeyError names the unknown table."""
    try:
        return TABLES[name]
    except KeyError:
        raise KeyError(f"unknown table {name!r}; known: {', '.join(sorted(TABLES))}") from None


# --- query and evaluation ---------------------------------------------------------------

_register(TableSpec(
    name="qa_answers",
    grain="one row per (run, question, sample): an answer with its evidence and scores",
    key=("run_id", "qid", "sample"),
    partition="run",
    schema=_schema(
        ("run_id", STR), ("benchmark", STR), ("qid", STR), ("doc_id", STR), ("system", STR), ("sample", INT),
        ("qtype", STR), ("question", STR), ("answer", STR), ("reference", STR), ("is_offline", BOOL),
        ("chosen_option", INT), ("gold_option", INT), ("is_correct_option", BOOL), ("rouge_l_f1", FLOAT),
        ("gold_section_ids", STR_LIST), ("evidence_section_ids", STR_LIST), ("evidence_recall", FLOAT),
        ("evidence_tokens", INT), ("cited_headings", STR_LIST), ("latency_ms", FLOAT), ("status", STR),
    ),
    not_null=("run_id", "benchmark", "qid", "doc_id", "system", "sample", "question", "status"),
    accepted_values={"status": ("answered", "document_missing", "error")},
))

_register(TableSpec(
    name="qa_traces",
    grain="one row per tool call made while answering a question",
    key=("run_id", "qid", "sample", "call_index"),
    partition="run",
    schema=_schema(
        ("run_id", STR), ("qid", STR), ("sample", INT), ("call_index", INT), ("round", INT), ("tool", STR),
        ("arguments", STR), ("rows", INT), ("tokens", INT), ("ms", FLOAT),
    ),
    not_null=("run_id", "qid", "sample", "call_index", "round", "tool"),
))

_register(TableSpec(
    name="eval_metrics",
    grain="one row per (run, qtype, metric); qtype '*' is the whole benchmark",
    key=("run_id", "qtype", "metric"),
    partition="run",
    schema=_schema(("run_id", STR), ("benchmark", STR), ("system", STR), ("qtype", STR), ("metric", STR),
                   ("value", FLOAT), ("n", INT)),
    not_null=("run_id", "benchmark", "system", "qtype", "metric", "n"),
))
