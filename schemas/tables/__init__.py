"""Every workspace table, declared once (pyarrow schema, key, grain, contracts), one module per part.

Importing this package registers every table in `TABLES`, in the order the modules are listed
here: documents and accounting (`core`), construction (`graph`), hierarchy (`hierarchy`),
downstream applications (`continuity`).
"""

from schemas.tables import core, graph, hierarchy  # noqa: F401  (each module registers its tables)
from schemas.tables import continuity  # noqa: F401  (registered last: it refers to the tables above)
from schemas.tables.spec import TABLES, ForeignKey, TableSpec, spec

__all__ = ["TABLES", "TableSpec", "ForeignKey", "spec"]
