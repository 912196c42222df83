"""Everything the query-time tools read about one document, loaded once per session: the
source index (sections, chunks, sentences, BM25, vectors), the graph, the narrative units,
facts and profiles, the hierarchy, and per-kind asset search indexes."""

from __future__ import annotations

import atexit
import re
import threading
import weakref
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable

import duckdb
import networkx as nx
import numpy as np
import pandas as pd
import pyarrow as pa

from tasks.query.store.asset_index import AssetIndex
from tasks.query.store.doc_index import DocumentIndex
from tasks.query.store.reader import document_reader
from tasks.tables.io import Workspace, as_list
from tasks.text import count_tokens

ASSET_TABLES = (
    "entities",
    "relations",
    "mentions",
    "atomic_facts",
    "entity_attributes",
    "entity_profiles",
    "events",
    "interactions",
    "occasions",
    "episodes",
    "episode_relations",
    "storylines",
    "storyline_relations",
    "communities",
    "sentence_salience",
    "summaries",
    "summary_quotes",
)
ASSET_KINDS = ("entity", "relation", "fact", "event", "interaction", "occasion", "episode", "storyline")

# Stores holding an open SQL connection, by id: closed at exit, or DuckDB reports each as a leak
# when the interpreter tears it down (weak, so a store nobody holds is still freed).
_WITH_SQL: "weakref.WeakValueDictionary[int, NarrativeStore]" = weakref.WeakValueDictionary()
_WITH_SQL_LOCK = threading.Lock()


@dataclass
class NarrativeStore:
    source: DocumentIndex
    tables: dict[str, pd.DataFrame]
    assets: dict[str, AssetIndex] = field(default_factory=dict)

    @classmethod
    def load(cls, workspace: Workspace, doc_id: str, source: DocumentIndex | None = None) -> "NarrativeStore":
        source = source or DocumentIndex.load(workspace, doc_id)
        reader = document_reader(workspace, doc_id)
        tables = {name: reader.frame(name) for name in ASSET_TABLES}
        embeddings = reader.frame("asset_embeddings")
        assets = (
            {kind: AssetIndex.build(kind, embeddings, source.language) for kind in ASSET_KINDS}
            if len(embeddings)
            else {}
        )
        return cls(source, tables, assets)

    def prepare(self) -> "NarrativeStore":
        """Build every lookup now (once per session) rather than inside the first answer."""
        for name in (
            "entities_by_id",
            "sections_by_id",
            "chunks_by_id",
            "chunk_position",
            "units_by_id",
            "episode_of_unit",
            "storylines_of_episode",
            "episode_dag",
            "entity_graph",
            "name_patterns",
            "attributes_by_entity",
            "profile_by_entity",
            "relations_by_id",
            "relations_of_entity",
            "_sql",
            "episodes_by_id",
            "storylines_by_id",
            "facts_by_id",
            "facts_of_entity",
            "sentences_of_chunk",
            "sentence_tokens",
            "sentence_salience",
            "summary_quotes_of",
        ):
            getattr(self, name)
        for name in ("sentence_rows", "chunk_rows", "chunk_ids_of_section", "section_rows", "sentence_spans"):
            getattr(self.source, name)
        return self

    def memo(self, key: str, build: Callable[[], Any]) -> Any:
        """A value a reader derives from this store (term windows, a name finder), built once and
        dropped with the store, so a session that lets a document go frees it all."""
        memos = self.__dict__.setdefault("_memos", {})
        if key not in memos:
            memos[key] = build()  # two threads may both build it: the same value, kept once
        return memos[key]

    @property
    def doc_id(self) -> str:
        return self.source.doc_id

    @property
    def has_graph(self) -> bool:
        return not self.tables["entities"].empty

    def table(self, name: str) -> pd.DataFrame:
        return self.tables[name]

    def asset(self, kind: str) -> AssetIndex | None:
        index = self.assets.get(kind)
        return index if index is not None and len(index) else None

    # --- lookups used by several tools -------------------------------------------------

    @cached_property
    def entities_by_id(self) -> dict[str, dict]:
        return {row["entity_id"]: row for row in self.tables["entities"].to_dict("records")}

    @cached_property
    def sections_by_id(self) -> dict[str, dict]:
        return {row["section_id"]: row for row in self.source.sections.to_dict("records")}

    @cached_property
    def chunks_by_id(self) -> dict[str, dict]:
        return {row["chunk_id"]: row for row in self.source.chunks.to_dict("records")}

    @cached_property
    def chunk_position(self) -> dict[str, int]:
        return {chunk_id: i for i, chunk_id in enumerate(self.source.chunks["chunk_id"])}

    @cached_property
    def units_by_id(self) -> dict[str, dict]:
        """Events, interactions and occasions by id, each tagged with its kind."""
        units: dict[str, dict] = {}
        for kind, table, key in (
            ("event", "events", "event_id"),
            ("interaction", "interactions", "interaction_id"),
            ("occasion", "occasions", "occasion_id"),
        ):
            for row in self.tables[table].to_dict("records"):
                units[row[key]] = {**row, "kind": kind}
        return units

    @cached_property
    def episode_of_unit(self) -> dict[str, str]:
        return {
            unit_id: row["episode_id"]
            for row in self.tables["episodes"].to_dict("records")
            for unit_id in row["unit_ids"]
        }

    @cached_property
    def storylines_of_episode(self) -> dict[str, list[str]]:
        found: dict[str, list[str]] = {}
        for row in self.tables["storylines"].to_dict("records"):
            for episode_id in row["episode_ids"]:
                found.setdefault(episode_id, []).append(row["storyline_id"])
        return found

    @cached_property
    def episode_dag(self) -> nx.DiGraph:
        """The cleaned progression graph: episode relations with status 'kept'."""
        graph = nx.DiGraph()
        graph.add_nodes_from(self.tables["episodes"]["episode_id"])
        kept = self.tables["episode_relations"]
        kept = kept[kept["status"] == "kept"] if not kept.empty else kept
        for row in kept.to_dict("records"):
            graph.add_edge(
                row["source_episode_id"],
                row["target_episode_id"],
                relation_type=row["relation_type"],
                confidence=row["confidence"],
            )
        return graph

    @cached_property
    def entity_graph(self) -> nx.Graph:
        graph = nx.Graph()
        graph.add_nodes_from(self.tables["entities"]["entity_id"])
        for row in self.tables["relations"].to_dict("records"):
            graph.add_edge(row["source_entity_id"], row["target_entity_id"], weight=row["weight"])
        return graph

    @cached_property
    def name_lexicon(self) -> list[tuple[str, str]]:
        """(lower-cased name or alias, entity id), longest first, for finding entities in questions."""
        pairs: set[tuple[str, str]] = set()
        for row in self.tables["entities"].to_dict("records"):
            for name in [row["name"], *as_list(row["aliases"])]:
                name = str(name).strip()
                if len(name) >= 2:
                    pairs.add((name.lower(), row["entity_id"]))
        return sorted(pairs, key=lambda p: (-len(p[0]), p[0], p[1]))

    @cached_property
    def name_patterns(self) -> list[tuple[re.Pattern, str]]:
        """`name_lexicon` as compiled patterns (word-bounded unless the name is Chinese), built once."""
        return [
            (
                re.compile(
                    re.escape(name)
                    if re.search(r"[\u4e00-\u9fff]", name)
                    else rf"(?<!\w){re.escape(name)}(?!\w)"
                ),
                entity_id,
            )
            for name, entity_id in self.name_lexicon
        ]

    @cached_property
    def attributes_by_entity(self) -> dict[str, list[dict]]:
        found: dict[str, list[dict]] = {}
        for row in self.tables["entity_attributes"].to_dict("records"):
            found.setdefault(row["entity_id"], []).append(row)
        return found

    @cached_property
    def profile_by_entity(self) -> dict[str, dict]:
        found: dict[str, dict] = {}
        for row in self.tables["entity_profiles"].to_dict("records"):
            found.setdefault(row["entity_id"], row)  # the first profile row, as the table orders them
        return found

    @cached_property
    def episodes_by_id(self) -> dict[str, dict]:
        return {row["episode_id"]: row for row in self.tables["episodes"].to_dict("records")}

    @cached_property
    def storylines_by_id(self) -> dict[str, dict]:
        return {row["storyline_id"]: row for row in self.tables["storylines"].to_dict("records")}

    @cached_property
    def facts_by_id(self) -> dict[str, dict]:
        return {row["fact_id"]: row for row in self.tables["atomic_facts"].to_dict("records")}

    @cached_property
    def facts_of_entity(self) -> dict[str, set[str]]:
        found: dict[str, set[str]] = {}
        for fact_id, entity_id in zip(
            self.tables["atomic_facts"]["fact_id"], self.tables["atomic_facts"]["entity_id"]
        ):
            found.setdefault(entity_id, set()).add(fact_id)
        return found

    @cached_property
    def entities_of_section(self) -> dict[str, frozenset[str]]:
        """The entities mentioned in each section (the entity graph's mentions)."""
        mentions = self.tables["mentions"]
        found: dict[str, set[str]] = {}
        for section_id, entity_id in zip(mentions["section_id"], mentions["entity_id"]):
            found.setdefault(section_id, set()).add(entity_id)
        return {section_id: frozenset(ids) for section_id, ids in found.items()}

    @cached_property
    def sentences_of_chunk(self) -> dict[str, np.ndarray]:
        """Positions (in the sentences frame) of each chunk's sentences."""
        found: dict[str, list[int]] = {}
        for position, chunk_id in enumerate(self.source.sentences["chunk_id"]):
            found.setdefault(chunk_id, []).append(position)
        return {chunk_id: np.array(positions, dtype=np.int64) for chunk_id, positions in found.items()}

    @cached_property
    def sentence_tokens(self) -> np.ndarray:
        return np.array([count_tokens(t) for t in self.source.sentences["text"]], dtype=np.int64)

    @property
    def has_summaries(self) -> bool:
        """Whether summarize_hierarchy has run for this document (older workspaces lack it)."""
        return not self.tables["sentence_salience"].empty

    @cached_property
    def sentence_salience(self) -> pd.DataFrame:
        """`sentence_salience` aligned to the source sentences by position (a sentence without a
        row gets salience 0 and counts as quotable)."""
        rows = self.tables["sentence_salience"].set_index("sentence_id")
        aligned = rows.reindex(self.source.sentences["sentence_id"])
        aligned["salience"] = aligned["salience"].fillna(0.0).astype(float)
        aligned["is_front_matter"] = aligned["is_front_matter"].fillna(False).astype(bool)
        return aligned.reset_index()

    @cached_property
    def summary_quotes_of(self) -> dict[str, pd.DataFrame]:
        """Each summary's quotes, in rank order, by summary id."""
        quotes = self.tables["summary_quotes"]
        return {summary_id: group.sort_values("rank") for summary_id, group in quotes.groupby("summary_id")}

    def summaries_of(self, level: str) -> pd.DataFrame:
        """The summaries of one level (episode, storyline, work, community) in their order."""
        found = self.tables["summaries"]
        return found[found["level"] == level].sort_values("ordinal")

    @cached_property
    def relations_of_entity(self) -> dict[str, list[str]]:
        """Relation ids touching each entity (as source or target)."""
        found: dict[str, list[str]] = {}
        relations = self.tables["relations"]
        for relation_id, source, target in zip(
            relations["relation_id"], relations["source_entity_id"], relations["target_entity_id"]
        ):
            found.setdefault(source, []).append(relation_id)
            if target != source:
                found.setdefault(target, []).append(relation_id)
        return found

    @cached_property
    def relations_by_id(self) -> dict[str, dict]:
        return {row["relation_id"]: row for row in self.tables["relations"].to_dict("records")}

    @cached_property
    def _sql(self) -> tuple[duckdb.DuckDBPyConnection, threading.Lock]:
        con = duckdb.connect(":memory:")
        # Arrow copies, converted once: DuckDB scans them without re-reading pandas objects per query.
        for name in ("events", "interactions", "occasions", "mentions", "entities"):
            con.register(name, pa.Table.from_pandas(self.tables[name], preserve_index=False))
        con.register("sentences", pa.Table.from_pandas(self.source.sentences, preserve_index=False))
        con.register("sections", pa.Table.from_pandas(self.source.sections, preserve_index=False))
        with _WITH_SQL_LOCK:
            _WITH_SQL[id(self)] = self
        return con, threading.Lock()

    def close(self) -> None:
        """Close the SQL connection, if one was opened (the next query opens a new one)."""
        opened = self.__dict__.pop("_sql", None)
        if opened is not None:
            con, lock = opened
            with lock:
                con.close()

    def sql(self, statement: str, params: dict) -> tuple[list[str], list[tuple]]:
        """(column names, rows) of a read query over the narrative tables; one in-memory DuckDB
        connection per document and session, serialised across threads."""
        con, lock = self._sql
        with lock:
            cursor = con.execute(statement, params)
            return [d[0] for d in cursor.description], cursor.fetchall()

    def section_heading(self, section_id: str | None) -> tuple[str | None, int | None]:
        section = self.sections_by_id.get(section_id) if section_id else None
        return (section["heading"], int(section["ordinal"])) if section else (None, None)

    def asset_vector(self, kind: str, item_id: str) -> np.ndarray | None:
        """The stored vector of one asset (None when it has none)."""
        index = self.asset(kind)
        if index is None:
            return None
        position = index.position.get(item_id)
        return None if position is None else index.vectors[position]


@atexit.register
def close_stores() -> None:
    """Close every store's SQL connection before the interpreter tears DuckDB down."""
    with _WITH_SQL_LOCK:
        stores = list(_WITH_SQL.values())
        _WITH_SQL.clear()
    for store in stores:
        store.close()
