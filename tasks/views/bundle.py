"""One document's bundle read for people: the tables the views and exports need, and the
graphs they draw (entity graph, episode DAG) as networkx graphs with their attributes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
import pandas as pd

from tasks.tables.io import Workspace, as_list, read_frame

VIEW_TABLES = (
    "documents",
    "sections",
    "entities",
    "mentions",
    "relations",
    "atomic_facts",
    "entity_profiles",
    "episodes",
    "episode_relations",
    "storylines",
    "continuity_counts",
    "continuity_chains",
    "character_states",
    "occasions",
)


@dataclass
class Bundle:
    doc_id: str
    tables: dict[str, pd.DataFrame]

    def __getitem__(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    @property
    def title(self) -> str:
        documents = self.tables["documents"]
        return str(documents.iloc[0]["title"]) if len(documents) else self.doc_id


def load_bundle(workspace: Workspace, doc_id: str) -> Bundle:
    """The document's tables (a table the workspace lacks reads as empty, with its columns)."""
    return Bundle(doc_id, {name: read_frame(workspace, name, doc_id) for name in VIEW_TABLES})


def _clean(value: Any) -> Any:
    """Attribute values GraphML and GEXF accept: strings, numbers, booleans (lists joined by '|')."""
    if isinstance(value, (list, tuple)) or hasattr(value, "tolist"):
        return "|".join(str(v) for v in as_list(value))
    if value is None or (isinstance(value, float) and pd.isna(value)):
        return ""
    if hasattr(value, "item"):
        return value.item()
    return value


def entity_graph(bundle: Bundle) -> nx.Graph:
    """Canonical entities (name, type, degree, mentions, profile) joined by their relations."""
    graph = nx.Graph(name=f"{bundle.doc_id} entity graph")
    profiles = dict(
        zip(bundle["entity_profiles"].get("entity_id", []), bundle["entity_profiles"].get("summary", []))
    )
    for row in bundle["entities"].to_dict("records"):
        graph.add_node(
            row["entity_id"],
            label=str(row["name"]),
            entity_type=str(row["entity_type"]),
            degree=int(row["degree"]),
            n_mentions=int(row["n_mentions"]),
            aliases=_clean(row.get("aliases")),
            profile=str(profiles.get(row["entity_id"], "")),
        )
    for row in bundle["relations"].to_dict("records"):
        if row["source_entity_id"] in graph and row["target_entity_id"] in graph:
            graph.add_edge(
                row["source_entity_id"],
                row["target_entity_id"],
                relation_id=row["relation_id"],
                description=_clean(row.get("description")),
                keywords=_clean(row.get("keywords")),
                weight=float(row["weight"]),
            )
    return graph


def episode_dag(bundle: Bundle) -> nx.DiGraph:
    """Episodes (title, summary, scene span, storylines) and the kept, cleaned episode relations."""
    graph = nx.DiGraph(name=f"{bundle.doc_id} episode DAG")
    storylines: dict[str, list[str]] = {}
    for row in bundle["storylines"].to_dict("records"):
        for episode_id in as_list(row["episode_ids"]):
            storylines.setdefault(episode_id, []).append(f"{row['origin'] or 'storyline'}:{row['name']}")
    for row in bundle["episodes"].to_dict("records"):
        graph.add_node(
            row["episode_id"],
            label=str(row["title"]),
            summary=str(row["summary"]),
            ordinal=int(row["ordinal"]),
            first_ordinal=int(row["first_ordinal"]),
            last_ordinal=int(row["last_ordinal"]),
            storylines="|".join(storylines.get(row["episode_id"], [])),
        )
    relations = bundle["episode_relations"]
    if len(relations):
        for row in relations[relations["status"] == "kept"].to_dict("records"):
            if row["source_episode_id"] in graph and row["target_episode_id"] in graph:
                graph.add_edge(
                    row["source_episode_id"],
                    row["target_episode_id"],
                    relation_id=row["relation_id"],
                    relation_type=str(row["relation_type"]),
                    confidence=float(row["confidence"]),
                    weight=float(row["weight"]),
                )
    return graph
