"""Narrative hierarchy tables (paper §3.2, appendix A.1): episodes, predicted episode links, the
SABER-cleaned episode relations with every cleaning action, storylines and their relations."""

from __future__ import annotations

from schemas.tables.spec import FLOAT, INT, STR, STR_LIST, ForeignKey, REQUIRED, TableSpec, columns, register

EPISODE_RELATION_TYPES = ("causes", "precedes", "elaborates", "contrasts")
RELATION_STATUSES = ("kept", "removed_cycle", "removed_shortcut", "removed_duplicate", "auxiliary")
STORYLINE_RELATION_TYPES = ("enables", "blocks", "resolves", "conflicts", "parallels", "prerequisite")
SABER_ACTIONS = (
    "remove_cycle_edge",
    "remove_duplicate",
    "mark_shortcut",
    "adjudicate",
    "remove_shortcut",
    "keep_shortcut",
)

# Episodes on a directed cycle through kept edges (a row per such episode; none in a DAG).
KEPT_EDGES_CYCLIC_SQL = (
    """
WITH RECURSIVE kept AS (
    SELECT DISTINCT source_episode_id AS s, target_episode_id AS d FROM {t} """
    """WHERE status = 'kept' AND mode <> 'raw'
), reach(s, d) AS (
    SELECT s, d FROM kept
    UNION
    SELECT reach.s, kept.d FROM reach JOIN kept ON reach.d = kept.s
)
SELECT DISTINCT s FROM reach WHERE s = d
"""
)

register(
    TableSpec(
        name="episodes",
        grain="one row per episode: a coherent group of events, interactions and occasions",
        key=("episode_id",),
        fields=columns(
            ("episode_id", STR, REQUIRED, "Episode id (hash of its units)"),
            ("doc_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("title", STR, REQUIRED, "Short title"),
            ("summary", STR, REQUIRED, "What happens, in a few sentences"),
            ("goal", STR, "What the participants are after"),
            ("participant_ids", STR_LIST),
            ("unit_ids", STR_LIST, REQUIRED, "Events, interactions and occasions grouped into it"),
            ("section_ids", STR_LIST, REQUIRED),
            ("first_ordinal", INT, REQUIRED, "Ordinal of its first section"),
            ("last_ordinal", INT, REQUIRED, "Ordinal of its last section"),
            ("coherence", FLOAT, "Coherence score of the grouping"),
            ("method", STR),
        ),
        foreign_keys=(
            ForeignKey("participant_ids", "entities", "entity_id", is_list=True),
            ForeignKey("section_ids", "sections", "section_id", is_list=True),
        ),
        invariants=(
            ("first ordinal not after last", "SELECT * FROM {t} WHERE first_ordinal > last_ordinal"),
            ("episode has units", "SELECT * FROM {t} WHERE len(unit_ids) = 0"),
        ),
    )
)


register(
    TableSpec(
        name="episode_links",
        grain="one row per predicted directed episode relation (before cleaning)",
        key=("link_id",),
        fields=columns(
            ("link_id", STR, REQUIRED, "Link id (hash of the ordered pair and type)"),
            ("doc_id", STR, REQUIRED),
            ("source_episode_id", STR, REQUIRED, "Earlier or causing episode; episodes.episode_id"),
            ("target_episode_id", STR, REQUIRED, "Later or affected episode; episodes.episode_id"),
            ("relation_type", STR, REQUIRED, "causes, precedes, elaborates or contrasts"),
            ("confidence", FLOAT, REQUIRED),
            ("evidence", STR),
            ("method", STR),
        ),
        accepted_values={"relation_type": EPISODE_RELATION_TYPES},
        foreign_keys=(
            ForeignKey("source_episode_id", "episodes", "episode_id", nullable=False),
            ForeignKey("target_episode_id", "episodes", "episode_id", nullable=False),
        ),
    )
)


register(
    TableSpec(
        name="episode_relations",
        grain=(
            "one row per predicted episode relation with its status after cleaning "
            "(raw / heuristic / saber)"
        ),
        key=("relation_id",),
        fields=columns(
            ("relation_id", STR, REQUIRED, "episode_links.link_id of the predicted link"),
            ("doc_id", STR, REQUIRED),
            ("source_episode_id", STR, REQUIRED, "episodes.episode_id"),
            ("target_episode_id", STR, REQUIRED, "episodes.episode_id"),
            ("relation_type", STR, REQUIRED, "causes, precedes, elaborates or contrasts"),
            ("confidence", FLOAT, REQUIRED),
            ("weight", FLOAT, REQUIRED, "Edge weight used by cleaning"),
            ("status", STR, REQUIRED,
             "kept, removed_cycle, removed_shortcut, removed_duplicate or auxiliary"),
            ("mode", STR, REQUIRED, "Cleaning mode: raw, heuristic or saber"),
        ),
        accepted_values={
            "relation_type": EPISODE_RELATION_TYPES,
            "status": RELATION_STATUSES,
            "mode": ("raw", "heuristic", "saber"),
        },
        foreign_keys=(
            ForeignKey("relation_id", "episode_links", "link_id", nullable=False),
            ForeignKey("source_episode_id", "episodes", "episode_id", nullable=False),
            ForeignKey("target_episode_id", "episodes", "episode_id", nullable=False),
        ),
        invariants=(
            ("one mode per document", "SELECT * FROM {t} WHERE mode <> (SELECT min(mode) FROM {t})"),
            (
                "contrasts are auxiliary, never progression",
                "SELECT * FROM {t} WHERE (relation_type = 'contrasts') <> (status = 'auxiliary')",
            ),
            # The raw ablation keeps the uncleaned graph on purpose; every cleaned mode must be a DAG.
            # UNION (not UNION ALL) makes the closure a set, so the recursion ends on cyclic input too.
            ("kept progression edges are acyclic outside raw mode", KEPT_EDGES_CYCLIC_SQL),
        ),
    )
)


register(
    TableSpec(
        name="saber_actions",
        grain="one row per cleaning action (cycle removal, shortcut mark, adjudication, removal or keep)",
        key=("action_id",),
        fields=columns(
            ("action_id", STR, REQUIRED, "Action id (hash of step and relation)"),
            ("doc_id", STR, REQUIRED),
            ("step", INT, REQUIRED, "Order of the action within cleaning"),
            ("action", STR, REQUIRED, "Cleaning action: one of SABER_ACTIONS (remove_cycle_edge, ...)"),
            ("relation_id", STR, REQUIRED, "episode_relations.relation_id acted on"),
            ("source_episode_id", STR, "episodes.episode_id"),
            ("target_episode_id", STR, "episodes.episode_id"),
            ("rule", STR, REQUIRED, "Rule that decided"),
            ("reason", STR),
            ("indirect_path", STR_LIST, "Episodes of the longer path that makes an edge a shortcut"),
        ),
        accepted_values={"action": SABER_ACTIONS},
        foreign_keys=(ForeignKey("relation_id", "episode_relations", "relation_id", nullable=False),),
    )
)


register(
    TableSpec(
        name="storylines",
        grain="one row per storyline: an ordered episode chain selected from the cleaned DAG",
        key=("storyline_id",),
        fields=columns(
            ("storyline_id", STR, REQUIRED, "Storyline id (hash of its episodes)"),
            ("doc_id", STR, REQUIRED),
            ("ordinal", INT, REQUIRED),
            ("name", STR, REQUIRED, "Storyline name"),
            ("description", STR, REQUIRED, "What the storyline is about"),
            ("impact", STR, "Its effect on the whole story"),
            ("key_character_ids", STR_LIST, "Main characters; entities.entity_id"),
            ("episode_ids", STR_LIST, REQUIRED, "Episodes of the chain, in order; episodes.episode_id"),
            ("section_ids", STR_LIST),
            ("first_ordinal", INT),
            ("last_ordinal", INT),
            ("origin", STR, "trunk, branch, terminal or split"),
            ("score", FLOAT, "Selection score"),
            ("method", STR),
        ),
        accepted_values={"origin": ("trunk", "branch", "terminal", "split")},
        foreign_keys=(
            ForeignKey("episode_ids", "episodes", "episode_id", is_list=True),
            ForeignKey("key_character_ids", "entities", "entity_id", is_list=True),
        ),
        invariants=(
            ("first ordinal not after last", "SELECT * FROM {t} WHERE first_ordinal > last_ordinal"),
            ("storyline is a chain of episodes", "SELECT * FROM {t} WHERE len(episode_ids) < 2"),
        ),
    )
)


register(
    TableSpec(
        name="storyline_relations",
        grain="one row per related pair of selected storylines (closed relation set)",
        key=("relation_id",),
        fields=columns(
            ("relation_id", STR, REQUIRED, "Relation id (hash of the pair and type)"),
            ("doc_id", STR, REQUIRED),
            ("source_storyline_id", STR, REQUIRED, "storylines.storyline_id"),
            ("target_storyline_id", STR, REQUIRED, "storylines.storyline_id"),
            ("relation_type", STR, REQUIRED,
             "enables, blocks, resolves, conflicts, parallels or prerequisite"),
            ("confidence", FLOAT, REQUIRED),
            ("reason", STR),
            ("method", STR),
        ),
        accepted_values={"relation_type": STORYLINE_RELATION_TYPES},
        foreign_keys=(
            ForeignKey("source_storyline_id", "storylines", "storyline_id", nullable=False),
            ForeignKey("target_storyline_id", "storylines", "storyline_id", nullable=False),
        ),
    )
)
