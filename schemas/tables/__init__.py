"""Every workspace table, declared once (columns with their types, whether each is required and a
one-line description, key, grain, contracts), one module per part of the bundle. The data dictionary
(`schemas.tables.dictionary`) and the Parquet field metadata are read from these declarations.

Importing this package registers every table in `TABLES`. All writes go through
`tasks.tables.io.write_table`, which casts to these schemas and rejects missing or unknown
columns; contracts are checked in DuckDB after each write. The downstream (`continuity`) and
evaluation-protocol (`evaluation`) tables register last: they refer to the tables above.
"""

from schemas.tables import accounting, documents, graph, hierarchy, narrative, qa  # noqa: F401 (registration)
from schemas.tables import extraction  # noqa: F401  (registration)
from schemas.tables import summaries  # noqa: F401  (registration)
from schemas.tables import continuity, evaluation  # noqa: F401  (registered last: they refer to the above)
from schemas.tables.spec import TABLES, ForeignKey, TableSpec, spec

__all__ = ["TABLES", "TableSpec", "ForeignKey", "spec"]
