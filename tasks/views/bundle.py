"""One document's bundle read for people: the tables the views and exports need, and the
graphs they draw (entity graph, directed interaction graph, episode DAG) as networkx graphs with
their attributes."""

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
    "summaries",
    "summary_quotes",
    "summary_claims",
    "continuity_counts",
    "continuity_chains",
    "character_states",
    "occasions",
    "interactions",
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
    _add_entities(graph, bundle)
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


def _add_entities(graph: nx.Graph, bundle: Bundle) -> None:
    profiles = dict(
        zip(bundle["entity_profiles"].get("entity_id", []), bundle["entity_profiles"].get("summary", []))
    )
    for row in bundle["entities"].to_dict("records"):
        graph.add_node(
            row["entity_id"],
            doc_id=bundle.doc_id,
            label=str(row["name"]),
            entity_type=str(row["entity_type"]),
            degree=int(row["degree"]),
            n_mentions=int(row["n_mentions"]),
            aliases=_clean(row.get("aliases")),
            profile=str(profiles.get(row["entity_id"], "")),
        )


def interaction_graph(bundle: Bundle) -> nx.DiGraph:
    """Entities joined by directed interactions, subject -> object: one edge per ordered pair, its
    weight the number of interactions, with their types and ids (`|`-joined, in text order)."""
    graph = nx.DiGraph(name=f"{bundle.doc_id} interaction graph")
    _add_entities(graph, bundle)
    frame = bundle["interactions"]
    rows = frame.sort_values(["char_start", "interaction_id"]).to_dict("records") if len(frame) else []
    for row in rows:
        subject = row["subject_id"]
        for target in as_list(row["object_ids"]):
            if subject not in graph or target not in graph or subject == target:
                continue
            if not graph.has_edge(subject, target):
                graph.add_edge(subject, target, weight=0.0, interaction_types="", interaction_ids="")
            edge = graph.edges[subject, target]
            edge["weight"] += 1.0
            types = edge["interaction_types"].split("|") if edge["interaction_types"] else []
            if str(row["interaction_type"]) not in types:
                types.append(str(row["interaction_type"]))
            edge["interaction_types"] = "|".join(types)
            edge["interaction_ids"] = "|".join(filter(None, [edge["interaction_ids"], row["interaction_id"]]))
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
            doc_id=bundle.doc_id,
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
