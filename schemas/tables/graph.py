"""Construction tables (paper §3.1): the entity–relation backbone before and after
canonicalization, narrative units, atomic facts, attributes and profiles.

Flow of ids: `extract_graph` writes raw_* rows keyed by raw ids; `canonicalize_entities`
records merge decisions and writes the canonical `entities` / `mentions` / `relations`
(a canonical entity id is the raw id of its cluster's representative, so undoing a merge
restores the original ids); later stages refer to canonical entity ids only.
"""

from __future__ import annotations

from schemas.tables.spec import (BOOL, FLOAT, INT, SPAN_INVARIANT, STR, STR_LIST, ForeignKey, TableSpec, register,
                                schema)

ENTITY_TYPES = ("character", "group", "location", "time", "object", "institution", "role", "concept")
EVENT_TYPES = ("action", "discovery", "decision", "arrival", "departure", "state_change", "communication", "other")
INTERACTION_TYPES = ("ask", "answer", "inform", "warn", "deceive", "help", "threaten", "persuade", "hide", "request",
                     "command", "refuse", "accuse", "comfort", "attack", "give", "greet", "confront", "other")
OCCASION_TYPES = ("scene", "situation", "institution", "norm", "background")
FACT_TYPES = ("state", "action", "goal", "cause", "mental_state", "relation", "attribute")

register(TableSpec(
    name="raw_entities",
    grain="one row per (document, entity type, normalized name) as extracted, before canonicalization",
    key=("raw_entity_id",),
    schema=schema(
        ("raw_entity_id", STR), ("doc_id", STR), ("name", STR), ("entity_type", STR), ("description", STR),
        ("surfaces", STR_LIST), ("is_proxy", BOOL), ("n_mentions", INT), ("chunk_ids", STR_LIST),
        ("first_ordinal", INT), ("method", STR),
    ),
    not_null=("raw_entity_id", "doc_id", "name", "entity_type", "is_proxy", "n_mentions", "method"),
    accepted_values={"entity_type": ENTITY_TYPES},
))

register(TableSpec(
    name="raw_mentions",
    grain="one row per grounded mention span of a raw entity",
    key=("mention_id",),
    schema=schema(
        ("mention_id", STR), ("doc_id", STR), ("raw_entity_id", STR), ("chunk_id", STR), ("surface", STR),
        ("char_start", INT), ("char_end", INT),
    ),
    not_null=("mention_id", "doc_id", "raw_entity_id", "chunk_id", "surface", "char_start", "char_end"),
    foreign_keys=(ForeignKey("raw_entity_id", "raw_entities", "raw_entity_id", nullable=False),
                  ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False)),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="raw_relations",
    grain="one row per unordered pair of raw entities, consolidated over chunks",
    key=("raw_relation_id",),
    schema=schema(
        ("raw_relation_id", STR), ("doc_id", STR), ("source_raw_id", STR), ("target_raw_id", STR),
        ("description", STR), ("keywords", STR_LIST), ("weight", FLOAT), ("chunk_ids", STR_LIST), ("method", STR),
    ),
    not_null=("raw_relation_id", "doc_id", "source_raw_id", "target_raw_id", "weight"),
    foreign_keys=(ForeignKey("source_raw_id", "raw_entities", "raw_entity_id", nullable=False),
                  ForeignKey("target_raw_id", "raw_entities", "raw_entity_id", nullable=False)),
))

register(TableSpec(
    name="merge_decisions",
    grain="one row per canonicalization decision on a blocked candidate pair of raw entities",
    key=("decision_id",),
    schema=schema(
        ("decision_id", STR), ("doc_id", STR), ("step", INT), ("left", STR), ("right", STR),
        ("decision", STR), ("method", STR), ("score", FLOAT), ("reason", STR),
    ),
    not_null=("decision_id", "doc_id", "step", "left", "right", "decision", "method"),
    accepted_values={"decision": ("merge", "separate")},
    foreign_keys=(ForeignKey("left", "raw_entities", "raw_entity_id", nullable=False),
                  ForeignKey("right", "raw_entities", "raw_entity_id", nullable=False)),
))

register(TableSpec(
    name="entities",
    grain="one row per canonical entity",
    key=("entity_id",),
    schema=schema(
        ("entity_id", STR), ("doc_id", STR), ("name", STR), ("entity_type", STR), ("description", STR),
        ("aliases", STR_LIST), ("is_proxy", BOOL), ("degree", INT), ("n_mentions", INT),
        ("raw_entity_ids", STR_LIST), ("chunk_ids", STR_LIST), ("section_ids", STR_LIST),
    ),
    not_null=("entity_id", "doc_id", "name", "entity_type", "is_proxy", "degree", "n_mentions"),
    accepted_values={"entity_type": ENTITY_TYPES},
    foreign_keys=(ForeignKey("raw_entity_ids", "raw_entities", "raw_entity_id", is_list=True),),
))

register(TableSpec(
    name="mentions",
    grain="one row per grounded mention of a canonical entity",
    key=("mention_id",),
    schema=schema(
        ("mention_id", STR), ("doc_id", STR), ("entity_id", STR), ("chunk_id", STR), ("section_id", STR),
        ("surface", STR), ("char_start", INT), ("char_end", INT),
    ),
    not_null=("mention_id", "doc_id", "entity_id", "chunk_id", "section_id", "surface", "char_start", "char_end"),
    foreign_keys=(ForeignKey("entity_id", "entities", "entity_id", nullable=False),
                  ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
                  ForeignKey("section_id", "sections", "section_id", nullable=False)),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="relations",
    grain="one row per unordered pair of canonical entities (source_entity_id < target_entity_id)",
    key=("relation_id",),
    schema=schema(
        ("relation_id", STR), ("doc_id", STR), ("source_entity_id", STR), ("target_entity_id", STR),
        ("description", STR), ("keywords", STR_LIST), ("weight", FLOAT), ("chunk_ids", STR_LIST),
        ("section_ids", STR_LIST), ("raw_relation_ids", STR_LIST),
    ),
    not_null=("relation_id", "doc_id", "source_entity_id", "target_entity_id", "weight"),
    foreign_keys=(ForeignKey("source_entity_id", "entities", "entity_id", nullable=False),
                  ForeignKey("target_entity_id", "entities", "entity_id", nullable=False),
                  ForeignKey("chunk_ids", "chunks", "chunk_id", is_list=True)),
    invariants=(("unordered pair stored once", "SELECT * FROM {t} WHERE source_entity_id >= target_entity_id"),),
))

_UNIT_SPAN = (("doc_id", STR), ("section_id", STR), ("chunk_id", STR), ("char_start", INT), ("char_end", INT))

register(TableSpec(
    name="events",
    grain="one row per event (action, discovery, decision, arrival, departure, state change)",
    key=("event_id",),
    schema=schema(
        ("event_id", STR), *_UNIT_SPAN, ("description", STR), ("event_type", STR), ("participant_ids", STR_LIST),
        ("setting_id", STR), ("time_cue", STR), ("evidence", STR), ("method", STR),
    ),
    not_null=("event_id", "doc_id", "section_id", "chunk_id", "description", "event_type", "char_start", "char_end"),
    accepted_values={"event_type": EVENT_TYPES},
    foreign_keys=(ForeignKey("participant_ids", "entities", "entity_id", is_list=True),
                  ForeignKey("setting_id", "entities", "entity_id"),
                  ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
                  ForeignKey("section_id", "sections", "section_id", nullable=False)),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="interactions",
    grain="one row per directed interaction (subject acts on objects)",
    key=("interaction_id",),
    schema=schema(
        ("interaction_id", STR), *_UNIT_SPAN, ("subject_id", STR), ("object_ids", STR_LIST),
        ("interaction_type", STR), ("description", STR), ("event_id", STR), ("occasion_id", STR),
        ("is_dialogue", BOOL), ("evidence", STR), ("method", STR),
    ),
    not_null=("interaction_id", "doc_id", "section_id", "chunk_id", "interaction_type", "description",
              "char_start", "char_end"),
    accepted_values={"interaction_type": INTERACTION_TYPES},
    foreign_keys=(ForeignKey("subject_id", "entities", "entity_id"),
                  ForeignKey("object_ids", "entities", "entity_id", is_list=True),
                  ForeignKey("event_id", "events", "event_id"),
                  ForeignKey("occasion_id", "occasions", "occasion_id"),
                  ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
                  ForeignKey("section_id", "sections", "section_id", nullable=False)),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="occasions",
    grain="one row per occasion: a stable situation, scene context or institutional constraint",
    key=("occasion_id",),
    schema=schema(
        ("occasion_id", STR), ("doc_id", STR), ("description", STR), ("occasion_type", STR),
        ("participant_ids", STR_LIST), ("setting_id", STR), ("section_ids", STR_LIST), ("chunk_ids", STR_LIST),
        ("method", STR),
    ),
    not_null=("occasion_id", "doc_id", "description", "occasion_type"),
    accepted_values={"occasion_type": OCCASION_TYPES},
    foreign_keys=(ForeignKey("participant_ids", "entities", "entity_id", is_list=True),
                  ForeignKey("setting_id", "entities", "entity_id"),
                  ForeignKey("section_ids", "sections", "section_id", is_list=True)),
))

register(TableSpec(
    name="atomic_facts",
    grain="one row per source-grounded fact about one entity (duplicates merged)",
    key=("fact_id",),
    schema=schema(
        ("fact_id", STR), ("doc_id", STR), ("entity_id", STR), ("text", STR), ("fact_type", STR),
        ("related_entity_ids", STR_LIST), ("chunk_id", STR), ("section_id", STR), ("char_start", INT),
        ("char_end", INT), ("method", STR),
    ),
    not_null=("fact_id", "doc_id", "entity_id", "text", "fact_type", "chunk_id", "section_id", "char_start", "char_end"),
    accepted_values={"fact_type": FACT_TYPES},
    foreign_keys=(ForeignKey("entity_id", "entities", "entity_id", nullable=False),
                  ForeignKey("related_entity_ids", "entities", "entity_id", is_list=True),
                  ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
                  ForeignKey("section_id", "sections", "section_id", nullable=False)),
    invariants=(SPAN_INVARIANT,),
))

register(TableSpec(
    name="entity_attributes",
    grain="one row per (entity, attribute key)",
    key=("entity_id", "key"),
    schema=schema(("doc_id", STR), ("entity_id", STR), ("key", STR), ("value", STR), ("fact_ids", STR_LIST)),
    not_null=("doc_id", "entity_id", "key", "value"),
    foreign_keys=(ForeignKey("entity_id", "entities", "entity_id", nullable=False),
                  ForeignKey("fact_ids", "atomic_facts", "fact_id", is_list=True)),
))

register(TableSpec(
    name="entity_profiles",
    grain="one row per profiled entity (graph degree at or above the threshold)",
    key=("entity_id",),
    schema=schema(("entity_id", STR), ("doc_id", STR), ("summary", STR), ("n_facts", INT),
                  ("first_ordinal", INT), ("last_ordinal", INT), ("method", STR)),
    not_null=("entity_id", "doc_id", "summary", "n_facts"),
    foreign_keys=(ForeignKey("entity_id", "entities", "entity_id", nullable=False),),
))
