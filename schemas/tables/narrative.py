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
            ("event_id", STR, REQUIRED, "Event id (hash of document, chunk and description)"),
            *_UNIT_SPAN,
            ("description", STR, REQUIRED, "What happens"),
            ("event_type", STR, REQUIRED,
             "action, discovery, decision, arrival, departure, state_change, communication or other"),
            ("participant_ids", STR_LIST),
            ("setting_id", STR),
            ("time_cue", STR, "Time expression in the text, if any"),
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
            ("interaction_id", STR, REQUIRED, "Interaction id (hash of document, chunk and description)"),
            *_UNIT_SPAN,
            ("subject_id", STR, "Entity that acts; entities.entity_id"),
            ("object_ids", STR_LIST, "Entities acted on; entities.entity_id"),
            ("interaction_type", STR, REQUIRED, "ask, answer, inform, warn, deceive, help, ... or other"),
            ("description", STR, REQUIRED, "What the subject does to the objects"),
            ("event_id", STR, "Event it belongs to; events.event_id"),
            ("occasion_id", STR, "Occasion it happens in; occasions.occasion_id"),
            ("is_dialogue", BOOL, "True when the interaction is spoken"),
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
            ("occasion_id", STR, REQUIRED, "Occasion id (hash of document and description)"),
            ("doc_id", STR, REQUIRED),
            ("description", STR, REQUIRED, "The situation, scene context or constraint"),
            ("occasion_type", STR, REQUIRED, "scene, situation, institution, norm or background"),
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
            ("fact_id", STR, REQUIRED, "Fact id (hash of entity and text)"),
            ("doc_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED, "Entity the fact is about; entities.entity_id"),
            ("text", STR, REQUIRED, "The fact, one sentence"),
            ("fact_type", STR, REQUIRED, "state, action, goal, cause, mental_state, relation or attribute"),
            ("related_entity_ids", STR_LIST, "Other entities named in it; entities.entity_id"),
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
            ("entity_id", STR, REQUIRED, "entities.entity_id"),
            ("key", STR, REQUIRED, "Attribute name (e.g. occupation)"),
            ("value", STR, REQUIRED, "Attribute value"),
            ("fact_ids", STR_LIST, "Facts the value comes from; atomic_facts.fact_id"),
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
            ("entity_id", STR, REQUIRED, "entities.entity_id"),
            ("doc_id", STR, REQUIRED),
            ("summary", STR, REQUIRED, "Profile text"),
            ("n_facts", INT, REQUIRED, "Facts the profile summarizes"),
            ("first_ordinal", INT, "Ordinal of the first section mentioning the entity"),
            ("last_ordinal", INT, "Ordinal of the last section mentioning it"),
            ("method", STR),
        ),
        foreign_keys=(ForeignKey("entity_id", "entities", "entity_id", nullable=False),),
    )
)
