"""Table specs: the TableSpec type, column type shorthands and the one registry of tables.

Tables are declared once each, in the module of their part: documents (text units and index
tables), graph, narrative, hierarchy, accounting (failures, llm_calls) and qa.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

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


# A column is (name, type) or (name, type, REQUIRED): each column is declared once, with whether it
# may be null, and the pyarrow schema and the not-null contract both follow from that one line.
REQUIRED = "required"
Column = tuple


def columns(*fields: Column) -> tuple[Column, ...]:
    """The columns of one table, in order; REQUIRED marks a column that must never be null."""
    for column in fields:
        if len(column) not in (2, 3) or (len(column) == 3 and column[2] != REQUIRED):
            raise ValueError(f"a column is (name, type) or (name, type, REQUIRED): {column!r}")
    return tuple(fields)


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
        # Nullability stays out of the Parquet schema (checked as a contract instead), so files
        # written before and after a column becomes required are the same bytes.
        return pa.schema([pa.field(column[0], column[1]) for column in self.fields])

    @property
    def columns(self) -> list[str]:
        return [column[0] for column in self.fields]

    @property
    def not_null(self) -> tuple[str, ...]:
        return tuple(column[0] for column in self.fields if len(column) == 3)


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
