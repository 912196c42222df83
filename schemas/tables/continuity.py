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
    CUES,
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
            ("doc_id", STR, REQUIRED, "Document (one row per document)"),
            ("n_scenes", INT, REQUIRED, "Scenes in the document"),
            ("all_pairs", INT, REQUIRED, "All scene pairs: n(n-1)/2"),
            ("entity_pairs", INT, REQUIRED, "Pairs sharing any entity"),
            ("hub_entities", INT, "Entities left out as hubs (in too many scenes)"),
            ("candidates", INT, REQUIRED, "Candidate pairs proposed"),
            ("max_entity_share", FLOAT, "Hub threshold: largest share of scenes an entity may appear in"),
            ("max_distance", INT, "Largest scene distance of a candidate pair"),
            ("min_similarity", FLOAT, "Smallest text similarity of a candidate pair"),
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
            ("candidate_id", STR, REQUIRED, "Candidate id (hash of the scene pair)"),
            ("doc_id", STR, REQUIRED),
            ("scene_a", STR, REQUIRED, "Earlier scene; sections.section_id"),
            ("scene_b", STR, REQUIRED, "Later scene; sections.section_id"),
            ("ordinal_a", INT, REQUIRED, "Ordinal of scene_a"),
            ("ordinal_b", INT, REQUIRED, "Ordinal of scene_b"),
            ("shared_entity_ids", STR_LIST, REQUIRED, "Entities both scenes share"),
            ("shared_types", STR_LIST, "Types of the shared entities"),
            ("via_occasion_ids", STR_LIST, "Occasions linking the scenes"),
            ("distance", INT, REQUIRED, "ordinal_b - ordinal_a"),
            ("similarity", FLOAT, "Text similarity of the scenes"),
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
            ("judgment_id", STR, REQUIRED, "Judgment id (hash of the candidate)"),
            ("doc_id", STR, REQUIRED),
            ("candidate_id", STR, REQUIRED, "continuity_candidates.candidate_id"),
            ("scene_a", STR, REQUIRED, "sections.section_id"),
            ("scene_b", STR, REQUIRED, "sections.section_id"),
            ("is_continuity", BOOL, REQUIRED, "True when the scenes can share a production setup"),
            ("confidence", FLOAT, REQUIRED),
            ("support", STR_LIST, "Cues supporting continuity"),
            ("blockers", STR_LIST, "Cues against it"),
            ("reason", STR),
            ("method", STR, REQUIRED, "llm or offline_rule"),
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
            ("chain_id", STR, REQUIRED, "Chain id (hash of kind and scenes)"),
            ("doc_id", STR, REQUIRED),
            ("kind", STR, REQUIRED, "preliminary or final"),
            ("ordinal", INT, REQUIRED, "Order of the chain within its kind"),
            ("section_ids", STR_LIST, REQUIRED, "Scenes of the chain, in order"),
            ("shared_entity_ids", STR_LIST, "Entities grounded in every scene of the chain"),
            ("cues", CUES, "Shared cues: entity, name, type and its span in every scene"),
            ("judgment_ids", STR_LIST, REQUIRED, "Pairwise judgments behind the chain"),
            ("decision", STR, REQUIRED, "Chain critic's verdict: keep, split or drop"),
            ("coherence_score", FLOAT, "Critic's coherence score"),
            ("confidence", FLOAT),
            ("weak_edges", STR_LIST, "Weak scene pairs, as 'scene_a|scene_b'"),
            ("rationale", STR, "Critic's rationale"),
            ("preliminary_id", STR, "For a final chain, the preliminary chain it comes from"),
            ("method", STR, REQUIRED, "llm or offline_rule"),
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
            ("state_id", STR, REQUIRED, "State id (hash of entity, scene and span)"),
            ("doc_id", STR, REQUIRED),
            ("section_id", STR, REQUIRED),
            ("entity_id", STR, REQUIRED, "Character; entities.entity_id"),
            ("state", STR, REQUIRED, "Observable state"),
            ("state_kind", STR, REQUIRED, "action, expression, posture, tone or appearance"),
            ("evidence", STR, REQUIRED, "Quote from the scene showing the state"),
            ("char_start", INT, REQUIRED),
            ("char_end", INT, REQUIRED),
            ("round", INT, REQUIRED),
            ("accepted", BOOL, REQUIRED, "True when a critic accepted it (false: rejected, or not reviewed)"),
            ("method", STR, REQUIRED, "llm or offline"),
        ),
        accepted_values={"state_kind": STATE_KINDS, "method": ("llm", "offline")},
        foreign_keys=(
            ForeignKey("section_id", "sections", "section_id", nullable=False),
            ForeignKey("entity_id", "entities", "entity_id", nullable=False),
        ),
        invariants=(SPAN_INVARIANT, ("round starts at 1", "SELECT * FROM {t} WHERE round < 1")),
    )
)
