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
    REQUIRED,
    columns,
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
        fields=columns(
            ("doc_id", STR, REQUIRED),
            ("n_scenes", INT, REQUIRED),
            ("all_pairs", INT, REQUIRED),
            ("entity_pairs", INT, REQUIRED),
            ("hub_entities", INT),
            ("candidates", INT, REQUIRED),
            ("max_entity_share", FLOAT),
            ("max_distance", INT),
            ("min_similarity", FLOAT),
        ),
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
        fields=columns(
            ("candidate_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("scene_a", STR, REQUIRED),
            ("scene_b", STR, REQUIRED),
            ("ordinal_a", INT, REQUIRED),
            ("ordinal_b", INT, REQUIRED),
            ("shared_entity_ids", STR_LIST, REQUIRED),
            ("shared_types", STR_LIST),
            ("via_occasion_ids", STR_LIST),
            ("distance", INT, REQUIRED),
            ("similarity", FLOAT),
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
        fields=columns(
            ("judgment_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("candidate_id", STR, REQUIRED),
            ("scene_a", STR, REQUIRED),
            ("scene_b", STR, REQUIRED),
            ("is_continuity", BOOL, REQUIRED),
            ("confidence", FLOAT, REQUIRED),
            ("support", STR_LIST),
            ("blockers", STR_LIST),
            ("reason", STR),
            ("method", STR, REQUIRED),
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
        fields=columns(
            ("chain_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("kind", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("section_ids", STR_LIST, REQUIRED),
            ("shared_entity_ids", STR_LIST),
            ("cues_json", STR),
            ("judgment_ids", STR_LIST, REQUIRED),
            ("decision", STR, REQUIRED),
            ("coherence_score", FLOAT),
            ("confidence", FLOAT),
            ("weak_edges", STR_LIST),
            ("rationale", STR),
            ("preliminary_id", STR),
            ("method", STR, REQUIRED),
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
        fields=columns(
            ("state_id", STR, REQUIRED),
            ("doc_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED),
            ("state", STR, REQUIRED),
            ("state_kind", STR, REQUIRED),
            ("evidence", STR, REQUIRED),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("round", INT, REQUIRED),
            ("accepted", BOOL, REQUIRED),
            ("method", STR, REQUIRED),
        ),
        accepted_values={"state_kind": STATE_KINDS, "method": ("llm", "offline")},
        foreign_keys=(
            ForeignKey("section_id", "sections", "section_id", nullable=False),
            ForeignKey("entity_id", "entities", "entity_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT, ("round starts at 1", "SELECT * FROM {t} WHERE round < 1")),
    )
)
