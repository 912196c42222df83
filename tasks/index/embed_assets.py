"""Embed the narrative assets (entities, relations, facts, events, interactions, occasions,
episodes, storylines) so query time can search them semantically without loading a model
per asset."""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd
import pyarrow as pa

from tasks.embeddings import Embedder
from tasks.index.asset_vectors import asset_vectors
from tasks.index.grounded_vectors import SentenceVectors
from tasks.index.vector_table import vector_table
from tasks.stage import StageContext, StageOutput


def _join(*parts: Any) -> str:
    return " ".join(str(p) for p in parts if p is not None and str(p).strip() and str(p) != "nan").strip()


def _names(values: Any) -> str:
    return (
        ", ".join(str(v) for v in values)
        if isinstance(values, (list, tuple)) or hasattr(values, "tolist")
        else ""
    )


def _other_names(name: Any, aliases: Any) -> list[str]:
    """An entity's aliases that are not its name or an earlier alias in another letter case
    ("LAKE IN FOREST", "Lake In Forest"): a case variant says nothing the name does not (to the
    uncased MiniLM it is the same tokens again), and they were 1,179 of Birthday Girl's 3,208
    entity-text tokens."""
    seen = {str(name).casefold()}
    kept: list[str] = []
    for alias in aliases if isinstance(aliases, (list, tuple)) or hasattr(aliases, "tolist") else []:
        key = str(alias).casefold()
        if key not in seen:
            seen.add(key)
            kept.append(str(alias))
    return kept


def _relation_text(source: str, target: str, description: str, keywords: str) -> str:
    """A relation's text: "source — target : description keywords", without the names in front
    when the description already says both ("Nadia appears at Kitchen (23、INT. KITCHEN - DAY)":
    860 of Birthday Girl's relation tokens embedded)."""
    said = description.casefold()
    if source.casefold() in said and target.casefold() in said:
        return _join(description, keywords)
    return _join(source, "—", target, ":", description, keywords)


def asset_texts(tables: dict[str, pd.DataFrame]) -> list[tuple[str, str, str]]:
    """(unit kind, unit id, text to embed) for every asset, in a deterministic order."""
    entity_names = dict(zip(tables["entities"]["entity_id"], tables["entities"]["name"]))
    recipes: list[tuple[str, str, str, Callable[[Any], str]]] = [
        (
            "entity",
            "entities",
            "entity_id",
            lambda r: _join(
                f"{r.name} ({r.entity_type}).",
                r.description,
                f"Also called {', '.join(others)}." if (others := _other_names(r.name, r.aliases)) else None,
            ),
        ),
        (
            "relation",
            "relations",
            "relation_id",
            lambda r: _relation_text(
                entity_names.get(r.source_entity_id, ""),
                entity_names.get(r.target_entity_id, ""),
                str(r.description or ""),
                _names(r.keywords),
            ),
        ),
        ("fact", "atomic_facts", "fact_id", lambda r: _join(r.text)),
        ("event", "events", "event_id", lambda r: _join(r.description)),
        ("interaction", "interactions", "interaction_id", lambda r: _join(r.description)),
        ("occasion", "occasions", "occasion_id", lambda r: _join(r.description)),
        ("episode", "episodes", "episode_id", lambda r: _join(r.title + ".", r.summary)),
        ("storyline", "storylines", "storyline_id", lambda r: _join(r.name + ".", r.description)),
    ]
    items: list[tuple[str, str, str]] = []
    for kind, table, key, text_of in recipes:
        frame = tables.get(table)
        if frame is None or frame.empty:
            continue
        for row in frame.sort_values(key).itertuples(index=False):
            text = text_of(row)
            if text:
                items.append((kind, getattr(row, key), text[:2000]))
    return items


def asset_embedding_rows(
    doc_id: str,
    items: list[tuple[str, str, str]],
    embedder: Embedder,
    tables: dict[str, pd.DataFrame] | None = None,
    derive_hierarchy: bool = False,
    sentences: SentenceVectors | None = None,
) -> pa.Table:
    """`asset_embeddings` rows of (kind, id, text) items; `sentences` derives texts quoting them."""
    vectors = asset_vectors(items, tables or {}, embedder, derive_hierarchy, sentences)
    columns = {
        "doc_id": [doc_id] * len(items),
        "unit_kind": [kind for kind, _, _ in items],
        "unit_id": [unit_id for _, unit_id, _ in items],
        "model": [embedder.name] * len(items),
        "text": [text for _, _, text in items],
    }
    return vector_table("asset_embeddings", columns, vectors)


def run(ctx: StageContext) -> StageOutput:
    if ctx.embedder is None:
        raise RuntimeError("embed_assets needs an embedder")
    settings = ctx.settings.embed_assets
    derive = settings.hierarchy_vectors == "derived"
    # texts quoting source sentences are derived from embed_texts' sentence vectors
    derive_grounded = settings.grounded_vectors == "derived"
    sentences = SentenceVectors.from_tables(ctx.tables, ctx.embedder.name) if derive_grounded else None
    items = asset_texts(ctx.tables)
    rows = asset_embedding_rows(ctx.doc_id, items, ctx.embedder, ctx.tables, derive, sentences)
    return {"asset_embeddings": rows}
