"""Query results every output format can print: values kept as the database writes them.

Python cannot hold every value DuckDB can (`'infinity'::DATE`, a timestamp past year 9999, a
UHUGEINT past 38 digits); converting one raised OverflowError and the row was lost. Columns of
those types are cast to text by DuckDB itself, so they print as it writes them (`infinity`,
`5 months`); nested columns holding one become DuckDB's JSON of the value, marked in the field
metadata so the JSON format gives the nested value back instead of a string.
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

# Types whose values all convert to Python and print as themselves.
PLAIN = {
    "boolean", "tinyint", "smallint", "integer", "bigint", "utinyint", "usmallint", "uinteger",
    "ubigint", "float", "double", "varchar", "blob", "decimal",
}
NESTED = {"list", "array", "struct", "map", "union"}
JSON_FIELD = b"nkw.json"  # field metadata key: the column holds JSON text of a nested value


def _children(column_type: duckdb.typing.DuckDBPyType) -> list:
    """The member types of a nested type (a union's tag is a member too, and plain)."""
    return [child for name, child in column_type.children if name not in ("size",)]


def is_plain(column_type: duckdb.typing.DuckDBPyType) -> bool:
    """True when every value of the type (nested members included) converts to Python as it is."""
    kind = column_type.id
    if kind in NESTED:
        return all(is_plain(child) for child in _children(column_type))
    return kind in PLAIN


def printable(relation: duckdb.DuckDBPyRelation) -> tuple[duckdb.DuckDBPyRelation, set[int]]:
    """`relation` with each column Python cannot always hold cast to text (nested ones to JSON),
    and the positions of the JSON columns. Columns are addressed by position: names may repeat."""
    types = relation.types
    if all(is_plain(t) for t in types):
        return relation, set()
    names = relation.columns
    expressions, json_columns = [], set()
    for index, (name, column_type) in enumerate(zip(names, types), start=1):
        alias = '"' + name.replace('"', '""') + '"'
        if is_plain(column_type):
            expressions.append(f"#{index} AS {alias}")
        elif column_type.id in NESTED:
            expressions.append(f"CAST(to_json(#{index}) AS VARCHAR) AS {alias}")
            json_columns.add(index - 1)
        else:
            expressions.append(f"CAST(#{index} AS VARCHAR) AS {alias}")
    return relation.project(", ".join(expressions)), json_columns


def mark_json(table: pa.Table, json_columns: set[int]) -> pa.Table:
    """`table` with the JSON columns' fields marked (see JSON_FIELD)."""
    if not json_columns:
        return table
    fields = [
        field.with_metadata({JSON_FIELD: b"1"}) if index in json_columns else field
        for index, field in enumerate(table.schema)
    ]
    return table.cast(pa.schema(fields))


def is_json_field(field: pa.Field) -> bool:
    return bool(field.metadata) and JSON_FIELD in field.metadata
