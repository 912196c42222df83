"""Narrative units and facts (paper §3.1.2-3.1.3): events, directed interactions, occasions, atomic
facts, the entity attribute dictionary and profiles. Units and facts refer to canonical entities."""

from __future__ import annotations

from schemas.tables.spec import (
    BOOL,
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

EVENT_TYPES = (
    "action",
    "discovery",
    "decision",
    "arrival",
    "departure",
    "state_change",
    "communication",
    "other",
)
INTERACTION_TYPES = (
    "ask",
    "answer",
    "inform",
    "warn",
    "deceive",
    "help",
    "threaten",
    "persuade",
    "hide",
    "request",
    "command",
    "refuse",
    "accuse",
    "comfort",
    "attack",
    "give",
    "greet",
    "confront",
    "other",
)
OCCASION_TYPES = ("scene", "situation", "institution", "norm", "background")
FACT_TYPES = ("state", "action", "goal", "cause", "mental_state", "relation", "attribute")

# Every narrative unit is grounded in one chunk of one section, at a character span.
_UNIT_SPAN = (
    ("doc_id", STR, REQUIRED),
    ("section_id", STR, REQUIRED),
    ("chunk_id", STR, REQUIRED),
    ("char_start", INT, REQUIRED),
    ("char_end", INT, REQUIRED),
)

register(
    TableSpec(
        name="events",
        grain="one row per event (action, discovery, decision, arrival, departure, state change)",
        key=("event_id",),
        fields=columns(
            ("event_id", STR, REQUIRED),
            *_UNIT_SPAN,
            ("description", STR, REQUIRED),
            ("event_type", STR, REQUIRED),
            ("participant_ids", STR_LIST),
            ("setting_id", STR),
            ("time_cue", STR),
            ("evidence", STR),
            ("method", STR),
        ),
        accepted_values={"event_type": EVENT_TYPES},
        foreign_keys=(
            ForeignKey("participant_ids", "entities", "entity_id", is_list=True),
            ForeignKey("setting_id", "entities", "entity_id"),
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
            ForeignKey("section_id", "sections", "section_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="interactions",
        grain="one row per directed interaction (subject acts on objects)",
        key=("interaction_id",),
        fields=columns(
            ("interaction_id", STR, REQUIRED),
            *_UNIT_SPAN,
            ("subject_id", STR),
            ("object_ids", STR_LIST),
            ("interaction_type", STR, REQUIRED),
            ("description", STR, REQUIRED),
            ("event_id", STR),
            ("occasion_id", STR),
            ("is_dialogue", BOOL),
            ("evidence", STR),
            ("method", STR),
        ),
        accepted_values={"interaction_type": INTERACTION_TYPES},
        foreign_keys=(
            ForeignKey("subject_id", "entities", "entity_id"),
            ForeignKey("object_ids", "entities", "entity_id", is_list=True),
            ForeignKey("event_id", "events", "event_id"),
            ForeignKey("occasion_id", "occasions", "occasion_id"),
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
            ForeignKey("section_id", "sections", "section_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="occasions",
        grain="one row per occasion: a stable situation, scene context or institutional constraint",
        key=("occasion_id",),
        fields=columns(
            ("occasion_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("description", STR, REQUIRED),
            ("occasion_type", STR, REQUIRED),
            ("participant_ids", STR_LIST),
            ("setting_id", STR),
            ("section_ids", STR_LIST),
            ("chunk_ids", STR_LIST),
            ("method", STR),
        ),
        accepted_values={"occasion_type": OCCASION_TYPES},
        foreign_keys=(
            ForeignKey("participant_ids", "entities", "entity_id", is_list=True),
            ForeignKey("setting_id", "entities", "entity_id"),
            ForeignKey("section_ids", "sections", "section_id", is_list=True),
        ),
    )
)


register(
    TableSpec(
        name="atomic_facts",
        grain="one row per source-grounded fact about one entity (duplicates merged)",
        key=("fact_id",),
        fields=columns(
            ("fact_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED),
            ("text", STR, REQUIRED),
            ("fact_type", STR, REQUIRED),
            ("related_entity_ids", STR_LIST),
            ("chunk_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("method", STR),
        ),
        accepted_values={"fact_type": FACT_TYPES},
        foreign_keys=(
            ForeignKey("entity_id", "entities", "entity_id", nullable=False),
            ForeignKey("related_entity_ids", "entities", "entity_id", is_list=True),
            ForeignKey("chunk_id", "chunks", "chunk_id", nullable=False),
            ForeignKey("section_id", "sections", "section_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT,),
    )
)


register(
    TableSpec(
        name="entity_attributes",
        grain="one row per (entity, attribute key)",
        key=("entity_id", "key"),
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED),
            ("key", STR, REQUIRED),
            ("value", STR, REQUIRED),
            ("fact_ids", STR_LIST),
        ),
        foreign_keys=(
            ForeignKey("entity_id", "entities", "entity_id", nullable=False),
            ForeignKey("fact_ids", "atomic_facts", "fact_id", is_list=True),
        ),
    )
)


register(
    TableSpec(
        name="entity_profiles",
        grain="one row per profiled entity (graph degree at or above the threshold)",
        key=("entity_id",),
        fields=columns(
            ("entity_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("summary", STR, REQUIRED),
            ("n_facts", INT, REQUIRED),
            ("first_ordinal", INT),
            ("last_ordinal", INT),
            ("method", STR),
        ),
        foreign_keys=(ForeignKey("entity_id", "entities", "entity_id", nullable=False),),
    )
)
