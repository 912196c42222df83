"""Downstream tables (paper §5, appendix D): production continuity checking and character
states.

Continuity: `continuity_counts` records per document how many scene pairs exist and how many
the scene–entity graph proposed; `continuity_candidates` are the proposed pairs with what
they share; `continuity_judgments` one pairwise decision per candidate; `continuity_chains`
the preliminary chains (connected groups of the continuity graph, with the chain critic's
verdict) and the final chains derived from them. `character_states` holds observable states
of characters per scene, each quoting a span of its scene.
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
    TableSpec,
    register,
    schema,
)

CHAIN_DECISIONS = ("keep", "split", "drop")
CHAIN_KINDS = ("preliminary", "final")
STATE_KINDS = ("action", "expression", "posture", "tone", "appearance")
CONTINUITY_METHODS = ("llm", "offline_rule")

register(
    TableSpec(
        name="continuity_counts",
        grain="one row per document: scenes, all scene pairs, pairs sharing any entity, candidate pairs",
        key=("doc_id",),
        schema=schema(
            ("doc_id", STR),
            ("n_scenes", INT),
            ("all_pairs", INT),
            ("entity_pairs", INT),
            ("hub_entities", INT),
            ("candidates", INT),
            ("max_entity_share", FLOAT),
            ("max_distance", INT),
            ("min_similarity", FLOAT),
        ),
        not_null=("doc_id", "n_scenes", "all_pairs", "entity_pairs", "candidates"),
        invariants=(
            (
                "candidates are a subset of all pairs",
                "SELECT * FROM {t} WHERE candidates > entity_pairs OR entity_pairs > all_pairs "
                "OR all_pairs <> n_scenes * (n_scenes - 1) / 2",
            ),
        ),
    )
)

register(
    TableSpec(
        name="continuity_candidates",
        grain="one row per candidate scene pair (scene_a first) sharing a grounded or occasion-linked entity",
        key=("candidate_id",),
        schema=schema(
            ("candidate_id", STR),
            ("doc_id", STR),
            ("scene_a", STR),
            ("scene_b", STR),
            ("ordinal_a", INT),
            ("ordinal_b", INT),
            ("shared_entity_ids", STR_LIST),
            ("shared_types", STR_LIST),
            ("via_occasion_ids", STR_LIST),
            ("distance", INT),
            ("similarity", FLOAT),
        ),
        not_null=(
            "candidate_id",
            "doc_id",
            "scene_a",
            "scene_b",
            "ordinal_a",
            "ordinal_b",
            "shared_entity_ids",
            "distance",
        ),
        foreign_keys=(
            ForeignKey("scene_a", "sections", "section_id", nullable=False),
            ForeignKey("scene_b", "sections", "section_id", nullable=False),
            ForeignKey("shared_entity_ids", "entities", "entity_id", is_list=True),
            ForeignKey("via_occasion_ids", "occasions", "occasion_id", is_list=True),
        ),
        invariants=(
            ("scene_a is told before scene_b", "SELECT * FROM {t} WHERE ordinal_a >= ordinal_b"),
            ("a candidate shares something", "SELECT * FROM {t} WHERE len(shared_entity_ids) = 0"),
        ),
    )
)

register(
    TableSpec(
        name="continuity_judgments",
        grain="one row per judged candidate pair: can the two scenes share a production setup",
        key=("judgment_id",),
        schema=schema(
            ("judgment_id", STR),
            ("doc_id", STR),
            ("candidate_id", STR),
            ("scene_a", STR),
            ("scene_b", STR),
            ("is_continuity", BOOL),
            ("confidence", FLOAT),
            ("support", STR_LIST),
            ("blockers", STR_LIST),
            ("reason", STR),
            ("method", STR),
        ),
        not_null=(
            "judgment_id",
            "doc_id",
            "candidate_id",
            "scene_a",
            "scene_b",
            "is_continuity",
            "confidence",
            "method",
        ),
        accepted_values={"method": CONTINUITY_METHODS},
        foreign_keys=(
            ForeignKey("candidate_id", "continuity_candidates", "candidate_id", nullable=False),
            ForeignKey("scene_a", "sections", "section_id", nullable=False),
            ForeignKey("scene_b", "sections", "section_id", nullable=False),
        ),
        invariants=(("confidence in [0, 1]", "SELECT * FROM {t} WHERE confidence < 0 OR confidence > 1"),),
    )
)

register(
    TableSpec(
        name="continuity_chains",
        grain="one row per continuity chain: preliminary (from the continuity graph, with the critic's "
        "verdict) or final (kept or split from a preliminary chain, every scene sharing a grounded cue)",
        key=("chain_id",),
        schema=schema(
            ("chain_id", STR),
            ("doc_id", STR),
            ("kind", STR),
            ("ordinal", INT),
            ("section_ids", STR_LIST),
            ("shared_entity_ids", STR_LIST),
            ("cues_json", STR),
            ("judgment_ids", STR_LIST),
            ("decision", STR),
            ("coherence_score", FLOAT),
            ("confidence", FLOAT),
            ("weak_edges", STR_LIST),
            ("rationale", STR),
            ("preliminary_id", STR),
            ("method", STR),
        ),
        not_null=(
            "chain_id",
            "doc_id",
            "kind",
            "ordinal",
            "section_ids",
            "judgment_ids",
            "decision",
            "method",
        ),
        accepted_values={"kind": CHAIN_KINDS, "decision": CHAIN_DECISIONS, "method": CONTINUITY_METHODS},
        foreign_keys=(
            ForeignKey("section_ids", "sections", "section_id", is_list=True, nullable=False),
            ForeignKey("shared_entity_ids", "entities", "entity_id", is_list=True),
            ForeignKey("judgment_ids", "continuity_judgments", "judgment_id", is_list=True),
        ),
        invariants=(
            ("a chain links at least two scenes", "SELECT * FROM {t} WHERE len(section_ids) < 2"),
            (
                "a final chain shares a cue and was kept",
                "SELECT * FROM {t} WHERE kind = 'final' "
                "AND (len(shared_entity_ids) = 0 OR decision = 'drop')",
            ),
        ),
    )
)

register(
    TableSpec(
        name="character_states",
        grain="one row per observable state of a character in a scene (action, expression, posture, tone)",
        key=("state_id",),
        schema=schema(
            ("state_id", STR),
            ("doc_id", STR),
            ("section_id", STR),
            ("entity_id", STR),
            ("state", STR),
            ("state_kind", STR),
            ("evidence", STR),
            ("char_start", INT),
            ("char_end", INT),
            ("round", INT),
            ("accepted", BOOL),
            ("method", STR),
        ),
        not_null=(
            "state_id",
            "doc_id",
            "section_id",
            "entity_id",
            "state",
            "state_kind",
            "evidence",
            "char_start",
            "char_end",
            "round",
            "accepted",
            "method",
        ),
        accepted_values={"state_kind": STATE_KINDS, "method": ("llm", "offline")},
        foreign_keys=(
            ForeignKey("section_id", "sections", "section_id", nullable=False),
            ForeignKey("entity_id", "entities", "entity_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT, ("round starts at 1", "SELECT * FROM {t} WHERE round < 1")),
    )
)
