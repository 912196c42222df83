"""Asset vectors, episodes and storylines derived from vectors already embedded (by default).

An episode is a run of units (events, interactions, occasions) whose descriptions are embedded
anyway (assemble_episodes embeds them; the vector store serves them again), so with
`[embed_assets] hierarchy_vectors = "derived"` (the default) an episode's vector is the token-weighted mean of
its units' vectors and a storyline's the mean of its episodes', weighted by their units' tokens
(tasks.index.derived_vectors). An episode or storyline with no member vector is embedded from
its text. The `text` column keeps each asset's own text either way."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from tasks.embeddings import Embedder
from tasks.index.derived_vectors import group_means
from tasks.tables.io import as_list
from tasks.text import count_tokens

UNIT_KINDS = ("event", "interaction", "occasion")
DERIVED_KINDS = ("episode", "storyline")


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


def asset_vectors(
    items: Sequence[tuple[str, str, str]],
    tables: dict[str, pd.DataFrame],
    embedder: Embedder,
    derive_hierarchy: bool,
) -> np.ndarray:
    """One vector per (kind, id, text) item, in order."""
    items = list(items)
    if not items:
        return np.zeros((0, 0), dtype=np.float32)
    derived_rows = [i for i, item in enumerate(items) if derive_hierarchy and item[0] in DERIVED_KINDS]
    skip = set(derived_rows)
    direct = [i for i in range(len(items)) if i not in skip]
    vectors: list[np.ndarray | None] = [None] * len(items)
    if direct:
        for row, vector in zip(direct, embedder.embed([items[i][2] for i in direct])):
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
