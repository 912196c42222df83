"""An entity's relations, strongest first, for deriving attributes of many entities: one sort of the
relations table and one pass over its rows, instead of a filter, a sort and a row conversion of the
table per entity (the order is the same: weight descending, then relation id, ties as in the table)."""

from __future__ import annotations

from typing import Any

import pandas as pd


class RelationIndex:
    def __init__(self, relations: pd.DataFrame | None) -> None:
        self._by_entity: dict[str, list[dict[str, Any]]] = {}
        if relations is None or relations.empty:
            return
        ordered = relations.sort_values(["weight", "relation_id"], ascending=[False, True])
        for relation in ordered.to_dict("records"):
            for entity_id in dict.fromkeys((relation["source_entity_id"], relation["target_entity_id"])):
                self._by_entity.setdefault(entity_id, []).append(relation)

    def of(self, entity_id: str) -> list[dict[str, Any]]:
        """The relations with `entity_id` at either end, strongest first."""
        return self._by_entity.get(entity_id, [])
