"""Dry-run estimates from a previous build of the same documents: the items each LLM stage works
over (profiled entities and their linked chunks, open merge pairs, episodes and their units,
shortcut questions, storylines) are read from the workspace and grouped with the functions the
stages use, so calls and prompt tokens follow the same packing and batching as a real build.

A previous offline build decided open merge pairs as `rule:no_evidence` and shortcut questions
with the heuristic adjudicator (rules `llm_*`): those are the items an LLM build asks about.
"""

from __future__ import annotations

from typing import Any, Callable

import pandas as pd

from flows.build import dry_run_downstream as downstream
from flows.build import dry_run_rendered as rendered
from schemas.config import Settings
from tasks.continuity.inputs import SCENE_TABLES
from tasks.llm.requests.chunk_packs import pack_chunks
from tasks.llm.requests.grouped import group_by_shared
from tasks.tables.io import Workspace, as_list, read_frame
from tasks.tables.manifest import load_manifest
from tasks.text import count_tokens

ENTITY_LINE_TOKENS = 24  # "n. name (type); other names: ...; known description: ...; excerpts: ..."
EXCERPT_HEADER_TOKENS = 8
ENTITY_NAME_EXTRA = 5  # "- name (character; also: ...)"
MAX_NAMES = 60  # names listed per narrative request
HEADING_TOKENS = 6


def _frames(workspace: Workspace, doc_ids: list[str], names: tuple[str, ...]) -> dict[str, pd.DataFrame]:
    frames = {}
    for name in names:
        frame = read_frame(workspace, name)
        frames[name] = frame[frame["doc_id"].isin(doc_ids)] if "doc_id" in frame else frame
    return frames


def _spread(items: list[Any], limit: int) -> list[Any]:
    """The even spread linked_chunks keeps: first and last included."""
    if len(items) <= limit:
        return items
    if limit == 1:
        return items[:1]
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def _facts(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    chunks = f["chunks"].sort_values(["doc_id", "char_start"])
    tokens = dict(zip(chunks["chunk_id"], chunks["n_tokens"].astype(int)))
    order = {c: i for i, c in enumerate(chunks["chunk_id"])}
    calls = prompt = 0
    for _, entities in f["entities"].groupby("doc_id"):
        plan = []
        for row in entities[entities["degree"] >= s.extract_facts.min_degree].itertuples():
            linked = sorted((c for c in as_list(row.chunk_ids) if c in order), key=order.get)
            linked = _spread(linked, s.extract_facts.max_chunks_per_entity)
            if linked:
                plan.append((row.entity_id, linked))
        plan.sort(key=lambda p: order[p[1][0]])
        groups = group_by_shared(
            plan, tokens, s.extract_facts.pack_tokens, s.extract_facts.max_entities_per_request
        )
        parts = dict(plan)
        for group in groups:
            union = {c for e in group for c in parts[e]}
            calls += 1
            prompt += template + len(group) * ENTITY_LINE_TOKENS
            prompt += sum(tokens[c] + EXCERPT_HEADER_TOKENS for c in union)
    return calls, prompt


def _narrative(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    chunks = f["chunks"].sort_values(["doc_id", "char_start"])
    named: dict[str, set[str]] = {}
    for row in f["entities"].itertuples():
        for chunk_id in as_list(row.chunk_ids):
            named.setdefault(chunk_id, set()).add(row.entity_id)
    line = dict(
        zip(
            f["entities"]["entity_id"],
            (count_tokens(str(n)) + ENTITY_NAME_EXTRA for n in f["entities"]["name"]),
        )
    )
    calls = prompt = 0
    for _, doc_chunks in chunks.groupby("doc_id"):
        for pack in pack_chunks(list(doc_chunks.itertuples()), "", s.extract_narrative.pack_tokens):
            shown = set().union(*(named.get(m.chunk_id, set()) for m in pack.members))
            text = sum(count_tokens(m.text) for m in pack.members)
            calls += 1
            prompt += template + text + sum(sorted(line.get(e, 8) for e in shown)[:MAX_NAMES])
            prompt += HEADING_TOKENS * len(pack.members)
    return calls, prompt


ESTIMATORS: dict[str, tuple[tuple[str, ...], Callable[..., tuple[int, int]]]] = {
    "extract_narrative": (("chunks", "entities"), _narrative),
    "extract_facts": (("chunks", "entities"), _facts),
    "relate_episodes": (("episodes", "entities", "documents"), rendered.relate),
    "canonicalize_entities": (
        ("merge_decisions", "raw_entities", "raw_mentions", "chunks", "documents"),
        rendered.canonicalize,
    ),
    "assemble_episodes": (
        ("episodes", "events", "interactions", "occasions", "sections", "entities", "documents"),
        rendered.assemble,
    ),
    "break_cycles": (("saber_actions", "episodes", "episode_relations", "documents"), rendered.break_cycles),
    "induce_storylines": (
        ("storylines", "episodes", "entities", "episode_relations", "documents"),
        rendered.induce,
    ),
    "judge_continuity": (("continuity_candidates", "documents", *SCENE_TABLES), downstream.judge),
    "chain_continuity": (
        ("continuity_chains", "continuity_judgments", "documents", *SCENE_TABLES),
        downstream.chains,
    ),
    "track_character_states": (
        ("character_states", "documents", "sections", "entities", "mentions", "occasions", "raw_units"),
        downstream.states,
    ),
}


def built_estimate(
    stage: str, workspace: Workspace | None, doc_ids: list[str], settings: Settings, template: int
) -> tuple[int, int] | None:
    """(calls, prompt tokens) of `stage` from a previous build's items; None without one."""
    if stage not in ESTIMATORS or workspace is None or not workspace.tables_dir.is_dir():
        return None
    tables, estimate = ESTIMATORS[stage]
    frames = _frames(workspace, doc_ids, tables)
    required = [name for name in tables if name not in downstream.MAY_BE_EMPTY]
    if any(frames[name].empty for name in required) and stage != "chain_continuity":
        return None
    if stage == "relate_episodes":  # candidate pairs are described in the previous build's manifest
        known = {}
        for doc_id in doc_ids:
            record = load_manifest(workspace, doc_id).stages.get(stage)
            if record is not None and record.details.get("candidate_pairs") is not None:
                known[doc_id] = record.details
        return rendered.relate(frames, settings, template, known)
    return estimate(frames, settings, template)
