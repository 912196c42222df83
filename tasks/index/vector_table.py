"""Rows of a vector table (`embeddings`, `asset_embeddings`) as one Arrow table built from the
vector matrix, not from a Python float per value."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from schemas.tables import spec


def vector_table(name: str, columns: dict[str, Sequence[Any]], vectors: np.ndarray) -> pa.Table:
    """Table `name` from its scalar `columns` and one vector per row."""
    table_spec = spec(name)
    rows = len(next(iter(columns.values()))) if columns else 0
    matrix = np.ascontiguousarray(vectors, dtype=np.float32).reshape(rows, -1) if rows else None
    if matrix is None:
        return table_spec.schema.empty_table()
    width = matrix.shape[1]
    offsets = pa.array(np.arange(0, rows * width + 1, width or 1, dtype=np.int32)[: rows + 1])
    if width == 0:
        offsets = pa.array(np.zeros(rows + 1, dtype=np.int32))
    vector = pa.ListArray.from_arrays(offsets, pa.array(matrix.reshape(-1), type=pa.float32()))
    data = {**columns, "vector": vector}
    return pa.table({c: data[c] for c in table_spec.columns}, schema=table_spec.schema)
