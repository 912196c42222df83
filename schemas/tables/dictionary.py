"""The data dictionary, read from the table specs: what `docs/tables.md` is generated from.

Pure: no workspace, no files. One entry per table (name, grain, key, partitioning) with its columns
in order: type, whether the Parquet schema allows null, whether the not-null contract requires a
value, the one-line description, accepted values and the column it refers to.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from schemas.tables.spec import TABLES, TableSpec

PARTITIONING = {
    "document": "one file per document: tables/<table>/<doc_id>.parquet",
    "document_stage": "one file per document and stage: tables/<table>/<doc_id>__<stage>.parquet",
    "run": "one file per run: tables/<table>/<run_id>.parquet",
}


def type_name(data_type: pa.DataType) -> str:
    """A column type as a reader sees it: `string`, `list<string>`, `struct<a: int64, ...>`, `json`."""
    if getattr(data_type, "extension_name", None) == "arrow.json":
        return "json"
    if pa.types.is_list(data_type):
        return f"list<{type_name(data_type.value_type)}>"
    if pa.types.is_struct(data_type):
        inner = ", ".join(f"{f.name}: {type_name(f.type)}" for f in data_type)
        return f"struct<{inner}>"
    return str(data_type)


def table_entry(table: TableSpec) -> dict[str, Any]:
    references = {fk.column: f"{fk.ref_table}.{fk.ref_column}" for fk in table.foreign_keys}
    schema = table.schema
    return {
        "table": table.name,
        "grain": table.grain,
        "key": list(table.key),
        "partitioning": PARTITIONING[table.partition],
        "columns": [
            {
                "name": column.name,
                "type": type_name(column.type),
                "nullable": schema.field(column.name).nullable,
                "required": column.required,
                "description": column.description,
                "accepted_values": list(table.accepted_values.get(column.name, ())),
                "references": references.get(column.name),
            }
            for column in table.fields
        ],
    }


def data_dictionary() -> list[dict[str, Any]]:
    """Every workspace table, in declaration order, as a plain dict (JSON-ready)."""
    return [table_entry(table) for table in TABLES.values()]
