"""Asset vectors derived from vectors already embedded, by default.

An episode is a run of units (events, interactions, occasions) whose vectors assemble_episodes
has already made, so with `[embed_assets] hierarchy_vectors = "derived"` (the default) an
episode's vector is the token-weighted mean of its units' vectors and a storyline's the mean of
its episodes', weighted by their units' tokens (tasks.index.derived_vectors). An episode or
storyline with no member vector is embedded from its text. With `[embed_assets]
grounded_vectors = "derived"` (the default) an event, interaction, fact or relation whose text
quotes source sentences is derived from those sentences' vectors and its remaining words'
(tasks.index.grounded_vectors), the same vectors assemble_episodes derives for units. The `text`
column keeps each asset's own text either way."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from tasks.embeddings import Embedder
from tasks.index.derived_vectors import group_means
from tasks.index.grounded_vectors import SentenceVectors, grounded_vectors
from tasks.tables.io import as_list
from tasks.text import count_tokens

UNIT_KINDS = ("event", "interaction", "occasion")
DERIVED_KINDS = ("episode", "storyline")
# Kinds whose rows carry a source span, by table and key (relations are found by their chunks).
SPAN_TABLES = {"events": "event_id", "interactions": "interaction_id", "atomic_facts": "fact_id"}
GROUNDED_KINDS = ("event", "interaction", "fact")


def _members(frame: pd.DataFrame | None, key: str, column: str) -> list[tuple[str, str]]:
    """(group id, member id) pairs of a table's list column."""
    if frame is None or frame.empty:
        return []
    return [(str(g), str(m)) for g, ms in zip(frame[key], frame[column]) for m in as_list(ms)]


def _derive(
    rows: list[int],
    items: list[tuple[str, str, str]],
    pairs: list[tuple[str, str]],
    vectors: dict[str, np.ndarray],
    weights: dict[str, float],
) -> tuple[dict[str, np.ndarray], dict[str, float], list[int]]:
    """Vectors of the assets at positions `rows` of `items` from their members' vectors, each
    group's summed member weight, and the rows with no member vector."""
    groups = [items[row][1] for row in rows]
    known = [(g, m) for g, m in pairs if m in vectors]
    if not known:
        return {}, {}, rows
    matrix = np.stack([vectors[m] for _, m in known])
    means, empty = group_means(groups, [g for g, _ in known], matrix, [weights[m] for _, m in known])
    mass: dict[str, float] = {}
    for group, member in known:
        mass[group] = mass.get(group, 0.0) + weights[member]
    skipped = {groups[e] for e in empty}
    derived = {g: means[i] for i, g in enumerate(groups) if g not in skipped}
    return derived, {g: mass[g] for g in derived}, [rows[e] for e in empty]


def grounded_candidates(
    items: Sequence[tuple[str, str, str]], tables: dict[str, pd.DataFrame], sentences: SentenceVectors
) -> list[list[int]]:
    """Per item, the rows of the source sentences its text may quote: those its span covers
    (events, interactions, facts) or those of its chunks (relations); none for other kinds."""
    spans: dict[str, tuple[int, int]] = {}
    for table, key in SPAN_TABLES.items():
        frame = tables.get(table)
        if frame is not None and not frame.empty:
            spans.update(zip(frame[key], zip(frame["char_start"].astype(int), frame["char_end"].astype(int))))
    relations = tables.get("relations")
    chunks = (
        dict(zip(relations["relation_id"], relations["chunk_ids"]))
        if relations is not None and not relations.empty
        else {}
    )
    candidates: list[list[int]] = []
    for kind, unit_id, _ in items:
        if kind in GROUNDED_KINDS and unit_id in spans:
            candidates.append(sentences.covering(*spans[unit_id]))
        elif kind == "relation" and unit_id in chunks:
            candidates.append(sentences.of_chunks([str(c) for c in as_list(chunks[unit_id])]))
        else:
            candidates.append([])
    return candidates


def asset_vectors(
    items: Sequence[tuple[str, str, str]],
    tables: dict[str, pd.DataFrame],
    embedder: Embedder,
    derive_hierarchy: bool,
    sentences: SentenceVectors | None = None,
) -> np.ndarray:
    """One vector per (kind, id, text) item, in order; texts that quote source sentences are
    derived from `sentences` when given (tasks.index.grounded_vectors), others embedded."""
    items = list(items)
    if not items:
        return np.zeros((0, 0), dtype=np.float32)
    derived_rows = [i for i, item in enumerate(items) if derive_hierarchy and item[0] in DERIVED_KINDS]
    skip = set(derived_rows)
    direct = [i for i in range(len(items)) if i not in skip]
    vectors: list[np.ndarray | None] = [None] * len(items)
    if direct:
        texts = [items[i][2] for i in direct]
        if sentences is None:
            found = embedder.embed(texts)
        else:
            candidates = grounded_candidates([items[i] for i in direct], tables, sentences)
            found = grounded_vectors(texts, candidates, sentences, embedder)
        for row, vector in zip(direct, found):
            vectors[row] = vector
    if not derived_rows:
        return np.stack(vectors).astype(np.float32)
    weights = {items[i][1]: float(max(count_tokens(items[i][2]), 1)) for i in range(len(items))}
    members = {
        "episode": _members(tables.get("episodes"), "episode_id", "unit_ids"),
        "storyline": _members(tables.get("storylines"), "storyline_id", "episode_ids"),
    }
    known = {items[i][1]: vectors[i] for i in direct if items[i][0] in UNIT_KINDS}
    for kind in DERIVED_KINDS:  # episodes first: storylines are made of them
        rows = [i for i in derived_rows if items[i][0] == kind]
        found, masses, missing = _derive(rows, items, members[kind], known, weights)
        if missing:  # no member vector: embedded from the asset's own text
            found.update(zip([items[i][1] for i in missing], embedder.embed([items[i][2] for i in missing])))
        for row in rows:
            vectors[row] = found[items[row][1]]
        known, weights = found, {**weights, **masses}
    return np.stack(vectors).astype(np.float32)
