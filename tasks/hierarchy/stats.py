"""Narrative-hierarchy statistics as in the paper's tables B.8–B.9, from the hierarchy tables."""

from __future__ import annotations

from typing import Any

import networkx as nx
import pandas as pd

STATISTICS = (
    "episodes",
    "episode_relations",
    "dag_relations",
    "cycle_edges_removed",
    "shortcut_edges_removed",
    "remaining_sccs",
    "storylines",
    "avg_storyline_length",
    "storyline_relations",
    "support_edges",
)


def _count(frame: pd.DataFrame, column: str, value: str) -> int:
    return int((frame[column] == value).sum()) if len(frame) else 0


def remaining_sccs(episode_relations: pd.DataFrame) -> int:
    """Strongly connected components of more than one episode left in the kept graph, per document."""
    kept = (
        episode_relations[episode_relations["status"] == "kept"]
        if len(episode_relations)
        else episode_relations
    )
    total = 0
    for _, rows in kept.groupby("doc_id", sort=True) if len(kept) else ():
        graph = nx.DiGraph()
        graph.add_edges_from(zip(rows["source_episode_id"], rows["target_episode_id"]))
        total += sum(1 for c in nx.strongly_connected_components(graph) if len(c) > 1)
    return total


def hierarchy_statistics(
    episodes: pd.DataFrame,
    episode_relations: pd.DataFrame,
    storylines: pd.DataFrame,
    storyline_relations: pd.DataFrame,
) -> dict[str, Any]:
    """Counts of the hierarchy tables given (one document's, or several: counts add up).

    episode_relations counts every predicted link; dag_relations the kept progression edges;
    support_edges the storyline -> episode containment links; avg_storyline_length is in episodes
    (0.0 without storylines).
    """
    lengths = [len(ids) for ids in storylines["episode_ids"]] if len(storylines) else []
    return {
        "episodes": int(len(episodes)),
        "episode_relations": int(len(episode_relations)),
        "dag_relations": _count(episode_relations, "status", "kept"),
        "cycle_edges_removed": _count(episode_relations, "status", "removed_cycle"),
        "shortcut_edges_removed": _count(episode_relations, "status", "removed_shortcut"),
        "remaining_sccs": remaining_sccs(episode_relations),
        "storylines": int(len(storylines)),
        "avg_storyline_length": round(sum(lengths) / len(lengths), 3) if lengths else 0.0,
        "storyline_relations": int(len(storyline_relations)),
        "support_edges": int(sum(lengths)),
    }
