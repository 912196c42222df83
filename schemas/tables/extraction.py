"""Raw passage units of the combined LLM extraction (paper §3.1.2-3.1.3 read in one pass):
the events, interactions, occasions and atomic facts a combined `extract_graph` reply gave each
chunk, with entity names as written. `extract_narrative` and `extract_facts` resolve the names to
canonical entities and write their own tables from these rows instead of asking the LLM again.
Empty offline and when the separate passes are configured."""

from __future__ import annotations

from schemas.tables.spec import INT, STR, REQUIRED, ForeignKey, TableSpec, columns, register

RAW_UNIT_KINDS = ("event", "interaction", "occasion", "fact")

register(
    TableSpec(
        name="raw_units",
        grain="one row per narrative unit or fact of one chunk in a combined extraction reply",
        key=("raw_unit_id",),
        fields=columns(
            ("raw_unit_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("kind", STR, REQUIRED),
            ("position", INT, REQUIRED),  # order within (chunk, kind); interactions cite events by it
            ("payload", STR, REQUIRED),  # the reply item as JSON (its response model's fields)
            ("method", STR),
        ),
        accepted_values={"kind": RAW_UNIT_KINDS},
        foreign_keys=(ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),),
        invariants=(("position not negative", "SELECT * FROM {t} WHERE position < 0"),),
    )
)
