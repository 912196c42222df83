"""Construction tables (paper §3.1): the entity–relation backbone before and after
canonicalization.

Flow of ids: `extract_graph` writes raw_* rows keyed by raw ids; `canonicalize_entities`
records merge decisions and writes the canonical `entities` / `mentions` / `relations`
(a canonical entity id is the raw id of its cluster's representative, so undoing a merge
restores the original ids); later stages refer to canonical entity ids only.
"""

from __future__ import annotations

from schemas.tables.spec import (
    BOOL,
    FLOAT,
    INT,
    SPAN_INVARIANT,
    STR,
    STR_LIST,
    ForeignKey,
    REQUIRED,
    TableSpec,
    columns,
    register,
)

ENTITY_TYPES = ("character", "group", "location", "time", "object", "institution", "role", "concept")

register(
    TableSpec(
        name="raw_entities",
        grain="one row per (document, entity type, normalized name) as extracted, before canonicalization",
        key=("raw_entity_id",),
        fields=columns(
            ("raw_entity_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("name", STR, REQUIRED),
            ("entity_type", STR, REQUIRED),
            ("description", STR),
            ("surfaces", STR_LIST),
            ("is_proxy", BOOL, REQUIRED),
            ("n_mentions", INT, REQUIRED),
            ("chunk_ids", STR_LIST),
            ("first_ordinal", INT),
            ("method", STR, REQUIRED),
        ),
        accepted_values={"entity_type": ENTITY_TYPES},
    )
)


register(
    TableSpec(
        name="raw_mentions",
        grain="one row per grounded mention span of a raw entity",
        key=("mention_id",),
        fields=columns(
            ("mention_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("raw_entity_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("surface", STR, REQUIRED),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
        ),
        foreign_keys=(
            ForeignKey("raw_entity_id", "raw_entities", "raw_entity_id", nullable=False),
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="raw_relations",
        grain="one row per unordered pair of raw entities, consolidated over chunks",
        key=("raw_relation_id",),
        fields=columns(
            ("raw_relation_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("source_raw_id", STR, REQUIRED),
            ("target_raw_id", STR, REQUIRED),
            ("description", STR),
            ("keywords", STR_LIST),
            ("weight", FLOAT, REQUIRED),
            ("chunk_ids", STR_LIST),
            ("method", STR),
        ),
        foreign_keys=(
            ForeignKey("source_raw_id", "raw_entities", "raw_entity_id", nullable=False),
            ForeignKey("target_raw_id", "raw_entities", "raw_entity_id", nullable=False),
        ),
    )
)


register(
    TableSpec(
        name="merge_decisions",
        grain="one row per canonicalization decision on a blocked candidate pair of raw entities",
        key=("decision_id",),
        fields=columns(
            ("decision_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("step", INT, REQUIRED),
            ("left", STR, REQUIRED),
            ("right", STR, REQUIRED),
            ("decision", STR, REQUIRED),
            ("method", STR, REQUIRED),
            ("score", FLOAT),
            ("reason", STR),
        ),
        accepted_values={"decision": ("merge", "separate")},
        foreign_keys=(
            ForeignKey("left", "raw_entities", "raw_entity_id", nullable=False),
            ForeignKey("right", "raw_entities", "raw_entity_id", nullable=False),
        ),
    )
)


register(
    TableSpec(
        name="entities",
        grain="one row per canonical entity",
        key=("entity_id",),
        fields=columns(
            ("entity_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("name", STR, REQUIRED),
            ("entity_type", STR, REQUIRED),
            ("description", STR),
            ("aliases", STR_LIST),
            ("is_proxy", BOOL, REQUIRED),
            ("degree", INT, REQUIRED),
            ("n_mentions", INT, REQUIRED),
            ("raw_entity_ids", STR_LIST),
            ("chunk_ids", STR_LIST),
            ("section_ids", STR_LIST),
        ),
        accepted_values={"entity_type": ENTITY_TYPES},
        foreign_keys=(ForeignKey("raw_entity_ids", "raw_entities", "raw_entity_id", is_list=True),),
    )
)


register(
    TableSpec(
        name="mentions",
        grain="one row per grounded mention of a canonical entity",
        key=("mention_id",),
        fields=columns(
            ("mention_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED),
            ("chunk_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("surface", STR, REQUIRED),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
        ),
        foreign_keys=(
            ForeignKey("entity_id", "entities", "entity_id", nullable=False),
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
            ForeignKey("section_id", "sections", "section_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="relations",
        grain="one row per unordered pair of canonical entities (source_entity_id < target_entity_id)",
        key=("relation_id",),
        fields=columns(
            ("relation_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("source_entity_id", STR, REQUIRED),
            ("target_entity_id", STR, REQUIRED),
            ("description", STR),
            ("keywords", STR_LIST),
            ("weight", FLOAT, REQUIRED),
            ("chunk_ids", STR_LIST),
            ("section_ids", STR_LIST),
            ("raw_relation_ids", STR_LIST),
        ),
        foreign_keys=(
            ForeignKey("source_entity_id", "entities", "entity_id", nullable=False),
            ForeignKey("target_entity_id", "entities", "entity_id", nullable=False),
            ForeignKey("chunk_ids", "chunks", "chunk_id", is_list=True),
        ),
        invariants=(
            ("unordered pair stored once", "SELECT * FROM {t} WHERE source_entity_id >= target_entity_id"),
        ),
    )
)
