"""Raw passage units of the combined LLM extraction (paper §3.1.2-3.1.3 read in one pass):
the events, interactions, occasions, atomic facts and character states a combined `extract_graph`
reply gave each chunk, with entity names as written. `extract_narrative`, `extract_facts` and
`track_character_states` resolve the names to canonical entities and write their own tables from
these rows instead of asking the LLM again. Empty offline and when the separate passes are
configured."""

from __future__ import annotations

from schemas.tables.spec import INT, JSON, STR, REQUIRED, ForeignKey, TableSpec, columns, register

RAW_UNIT_KINDS = ("event", "interaction", "occasion", "fact", "state")

register(
    TableSpec(
        name="raw_units",
        grain="one row per narrative unit, fact or character state of one chunk in a combined "
        "extraction reply",
        key=("raw_unit_id",),
        fields=columns(
            ("raw_unit_id", STR, REQUIRED, "Raw unit id (hash of chunk, kind and position)"),
            ("doc_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("kind", STR, REQUIRED, "event, interaction, occasion, fact or state"),
            ("position", INT, REQUIRED, "Order within (chunk, kind); interactions cite events by it"),
            (
                "payload",
                JSON,
                REQUIRED,
                "The reply item as JSON (the fields of its response model, names as written)",
            ),
            ("method", STR),
        ),
        accepted_values={"kind": RAW_UNIT_KINDS},
        foreign_keys=(ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),),
        invariants=(("position not negative", "SELECT * FROM {t} WHERE position < 0"),),
    )
)
