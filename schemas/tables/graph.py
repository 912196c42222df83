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
            ("raw_entity_id", STR, REQUIRED, "Raw entity id (hash of document, type and normalized name)"),
            ("doc_id", STR, REQUIRED),
            ("name", STR, REQUIRED, "Name as extracted"),
            ("entity_type", STR, REQUIRED,
             "character, group, location, time, object, institution, role or concept"),
            ("description", STR, "Description from the extraction"),
            ("surfaces", STR_LIST, "Surface forms seen in the text"),
            ("is_proxy", BOOL, REQUIRED,
             "True for a stand-in (a pronoun-like or generic mention, e.g. 'the man')"),
            ("n_mentions", INT, REQUIRED, "Grounded mentions found"),
            ("chunk_ids", STR_LIST),
            ("first_ordinal", INT, "Ordinal of the first section mentioning it"),
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
            ("mention_id", STR, REQUIRED, "Mention id (hash of entity and span)"),
            ("doc_id", STR, REQUIRED),
            ("raw_entity_id", STR, REQUIRED, "raw_entities.raw_entity_id"),
            ("chunk_id", STR, REQUIRED),
            ("surface", STR, REQUIRED, "Text of the mention as written"),
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
            ("raw_relation_id", STR, REQUIRED, "Raw relation id (hash of the pair)"),
            ("doc_id", STR, REQUIRED),
            ("source_raw_id", STR, REQUIRED, "One end; raw_entities.raw_entity_id"),
            ("target_raw_id", STR, REQUIRED, "Other end; raw_entities.raw_entity_id"),
            ("description", STR, "How the two relate, as extracted"),
            ("keywords", STR_LIST, "Relation keywords"),
            ("weight", FLOAT, REQUIRED,
             "Strength: number of chunks (or extraction weight) supporting the pair"),
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
            ("decision_id", STR, REQUIRED, "Decision id (hash of the pair and step)"),
            ("doc_id", STR, REQUIRED),
            ("step", INT, REQUIRED, "Order of the decision within canonicalization"),
            ("left", STR, REQUIRED, "One raw entity of the pair; raw_entities.raw_entity_id"),
            ("right", STR, REQUIRED, "Other raw entity; raw_entities.raw_entity_id"),
            ("decision", STR, REQUIRED, "merge or separate"),
            ("method", STR, REQUIRED),
            ("score", FLOAT, "Similarity score behind the decision"),
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
            ("entity_id", STR, REQUIRED, "Canonical entity id (the raw id of its cluster's representative)"),
            ("doc_id", STR, REQUIRED),
            ("name", STR, REQUIRED, "Canonical name"),
            ("entity_type", STR, REQUIRED,
             "character, group, location, time, object, institution, role or concept"),
            ("description", STR, "Merged description"),
            ("aliases", STR_LIST, "Other names and surface forms"),
            ("is_proxy", BOOL, REQUIRED, "True for a stand-in entity (generic reference)"),
            ("degree", INT, REQUIRED, "Relations the entity takes part in"),
            ("n_mentions", INT, REQUIRED, "Grounded mentions"),
            ("raw_entity_ids", STR_LIST, "Raw entities merged into it; raw_entities.raw_entity_id"),
            ("chunk_ids", STR_LIST),
            ("section_ids", STR_LIST, "Sections where it is mentioned"),
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
            ("mention_id", STR, REQUIRED, "Mention id (hash of entity and span)"),
            ("doc_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED, "entities.entity_id"),
            ("chunk_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("surface", STR, REQUIRED, "Text of the mention as written"),
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
            ("relation_id", STR, REQUIRED, "Relation id (hash of the unordered pair)"),
            ("doc_id", STR, REQUIRED),
            ("source_entity_id", STR, REQUIRED, "Lesser entity id of the pair; entities.entity_id"),
            ("target_entity_id", STR, REQUIRED, "Greater entity id of the pair; entities.entity_id"),
            ("description", STR, "How the two relate"),
            ("keywords", STR_LIST, "Relation keywords"),
            ("weight", FLOAT, REQUIRED, "Strength: chunks supporting the pair"),
            ("chunk_ids", STR_LIST),
            ("section_ids", STR_LIST, "Sections where the pair is related"),
            ("raw_relation_ids", STR_LIST, "Raw relations merged into it"),
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
