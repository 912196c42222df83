"""Table specs: the TableSpec type, column type shorthands and the one registry of tables.

Tables are declared in schemas/tables.py (documents, segmentation, accounting, query),
schemas/graph_tables.py (construction) and schemas/hierarchy_tables.py (episodes and
storylines); each table exactly once.
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


def schema(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(name, dtype) for name, dtype in fields])


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
