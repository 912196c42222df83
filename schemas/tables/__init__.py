"""Every workspace table, declared once (pyarrow schema, key, grain, contracts), one module per part.

Importing this package registers every table in `TABLES`, in the order the modules are listed
here: documents and accounting (`core`), construction (`graph`), hierarchy (`hierarchy`),
the evaluation protocol (`evaluation`).
"""

from schemas.tables import core, graph, hierarchy  # noqa: F401  (each module registers its tables)
from schemas.tables import evaluation  # noqa: F401,I001  (registered last: evaluation-protocol tables)
from schemas.tables.spec import TABLES, ForeignKey, TableSpec, spec

__all__ = ["TABLES", "TableSpec", "ForeignKey", "spec"]
