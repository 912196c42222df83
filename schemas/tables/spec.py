"""Table specs: the TableSpec type, column type shorthands and the one registry of tables.

Tables are declared once each, in the module of their part: documents (text units and index
tables), graph, narrative, hierarchy, accounting (failures, llm_calls) and qa.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import NamedTuple

import pyarrow as pa

STR = pa.string()
INT = pa.int64()
FLOAT = pa.float64()
BOOL = pa.bool_()
STR_LIST = pa.list_(pa.string())
VECTOR = pa.list_(pa.float32())
# Free-form JSON (a document's own metadata, a tool call's arguments): Parquet's JSON logical type,
# which DuckDB reads as JSON (`meta->>'$.genre'`) and pandas as text.
JSON = pa.json_(pa.string())
# A continuity chain's cues: each shared entity with its grounding span in every scene of the chain.
CUE_SPAN = pa.struct([("section_id", STR), ("surface", STR), ("char_start", INT), ("char_end", INT)])
CUES = pa.list_(pa.struct([("entity_id", STR), ("name", STR), ("type", STR), ("spans", pa.list_(CUE_SPAN))]))
# What the evidence board of an answer held (tasks.query.evidence.board.EvidenceBoard.composition).
BOARD = pa.struct(
    [
        (name, INT)
        for name in (
            "entity_items",
            "relation_items",
            "narrative_items",
            "facts",
            "passages",
            "source_tokens",
            "source_budget",
        )
    ]
)


@dataclass(frozen=True)
class ForeignKey:
    """`column` (scalar or list of ids) must resolve to `ref_table.ref_column` in the same document."""

    column: str
    ref_table: str
    ref_column: str
    is_list: bool = False
    nullable: bool = True


# A column is (name, type[, REQUIRED][, description]): each column is declared once, with whether it
# may be null and what it holds; the pyarrow schema (nullability, field descriptions), the not-null
# contract and the data dictionary all follow from that one line. Columns many tables share (doc_id,
# char_start, method, ...) take their description from COMMON unless they give their own.
REQUIRED = "required"


class Column(NamedTuple):
    name: str
    type: pa.DataType
    required: bool
    description: str


COMMON = {
    "doc_id": "Document id (the file's stem, or the id of its JSONL record); the partition of the row",
    "section_id": "Section (scene or chapter) the row lies in; sections.section_id",
    "chunk_id": "Retrieval chunk the row was extracted from; chunks.chunk_id",
    "char_start": "Start offset of the grounding span in the document text (characters, inclusive)",
    "char_end": "End offset of the grounding span in the document text (characters, exclusive)",
    "method": "How the row was made: 'llm', or the offline heuristic's name",
    "evidence": "Quote from the source text that grounds the row",
    "ordinal": "Position in reading order within the document, from 1",
    "first_ordinal": "Ordinal of the first section covered",
    "last_ordinal": "Ordinal of the last section covered",
    "chunk_ids": "Chunks the row is grounded in; chunks.chunk_id",
    "section_ids": "Sections the row covers, in reading order; sections.section_id",
    "participant_ids": "Entities taking part; entities.entity_id",
    "setting_id": "Location entity where it takes place; entities.entity_id",
    "run_id": "Query or evaluation run (content hash of questions, settings and workspace state)",
    "qid": "Question id from the questions file",
    "sample": "Sample index of a repeated answer to the same question, from 0",
    "benchmark": "Benchmark (questions file) name",
    "system": "Answering system ('nkw' or a baseline)",
    "qtype": "Question type; '*' is the whole benchmark",
    "unit_kind": "Kind of unit the row is about",
    "unit_id": "Id of that unit in its own table",
    "model": "Embedding model name",
    "vector": "Embedding vector (float32)",
    "confidence": "Confidence in [0, 1]",
    "reason": "Why, in a sentence (from the LLM or the rule that decided)",
    "stage": "Build or query stage that wrote the row",
    "item_id": "Item the row is about within its stage (a chunk, an entity, a question ...)",
    "status": "Outcome status",
    "round": "Round of the iterative process, from 1",
}


def columns(*fields: tuple) -> tuple[Column, ...]:
    """The columns of one table, in order; REQUIRED marks a column that must never be null."""
    parsed = []
    for column in fields:
        if len(column) < 2 or not isinstance(column[0], str) or not isinstance(column[1], pa.DataType):
            raise ValueError(f"a column is (name, type[, REQUIRED][, description]): {column!r}")
        rest = list(column[2:])
        required = bool(rest) and rest[0] == REQUIRED
        if required:
            rest.pop(0)
        description = rest.pop(0) if rest and isinstance(rest[0], str) else COMMON.get(column[0], "")
        if rest or not description:
            raise ValueError(f"column {column[0]!r}: give a one-line description (or one in COMMON)")
        parsed.append(Column(column[0], column[1], required, description))
    return tuple(parsed)


def is_identifier(name: str) -> bool:
    """Id columns (`*_id`, `qid`): when required, null is impossible in the Parquet schema itself."""
    return name.endswith("_id") or name == "qid"


@dataclass(frozen=True)
class TableSpec:
    name: str
    fields: tuple[Column, ...]
    key: tuple[str, ...]
    grain: str
    # "document": one Parquet file per document; "document_stage": one per (document, stage)
    # for tables several stages append to; "run": one per query/evaluation run.
    partition: str = "document"
    accepted_values: dict[str, tuple[str, ...]] = field(default_factory=dict)
    foreign_keys: tuple[ForeignKey, ...] = ()
    # SQL invariants: each query returns offending rows; `{t}` is this table's relation.
    invariants: tuple[tuple[str, str], ...] = ()

    @cached_property
    def schema(self) -> pa.Schema:
        # Key columns and required ids are non-nullable in the file, so an outside reader sees which
        # columns identify a row; other required columns stay nullable in Parquet and are checked as
        # contracts (a violation then names the stage instead of failing inside the writer).
        return pa.schema(
            [
                pa.field(
                    column.name,
                    column.type,
                    nullable=not self.is_non_nullable(column),
                    metadata={"description": column.description},
                )
                for column in self.fields
            ]
        )

    def is_non_nullable(self, column: Column) -> bool:
        return column.required and (column.name in self.key or is_identifier(column.name))

    @property
    def columns(self) -> list[str]:
        return [column.name for column in self.fields]

    @property
    def not_null(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.fields if column.required)


SPAN_INVARIANT = ("span inside document", "SELECT * FROM {t} WHERE char_start < 0 OR char_end < char_start")

TABLES: dict[str, TableSpec] = {}


def register(table: TableSpec) -> TableSpec:
    if table.name in TABLES:
        raise ValueError(f"table {table.name} declared twice")
    TABLES[table.name] = table
    return table


def spec(name: str) -> TableSpec:
    """The declared spec of table `name`; a KeyError names the unknown table."""
    try:
        return TABLES[name]
    except KeyError:
        raise KeyError(f"unknown table {name!r}; known: {', '.join(sorted(TABLES))}") from None
