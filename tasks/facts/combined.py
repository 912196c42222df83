"""Atomic facts from the combined extraction's `raw_units` (written by extract_graph): each fact
names its entity as written; it is resolved to a canonical entity, kept when that entity is
profiled (graph degree at least `min_degree`), located by its evidence quote in its own chunk and
deduplicated per entity. Attributes and the profile summary are then derived from the entity's
facts and relations by the same rules as offline (no LLM call; profiles say `llm:facts+rules`).

Facts whose entity name resolves to no canonical entity are dropped and counted; a row whose
payload does not parse is a `failures` row.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
from pydantic import ValidationError

from schemas.config import ExtractFactsSettings
from schemas.responses.combined import PassageFact
from tasks.facts.attributes import add_entity_rows, derive_attributes
from tasks.facts.heuristics import normal_key
from tasks.facts.located import located_fact_row
from tasks.facts.relation_index import RelationIndex
from tasks.narrative.combined import failure_row
from tasks.narrative.inputs import NarrativeInputs
from tasks.tables.io import as_list

PROFILE_METHOD = "llm:facts+rules"


def stored_facts(
    raw_units: pd.DataFrame, doc_id: str, stage: str, chunk_order: dict[str, int]
) -> tuple[list[tuple[str, PassageFact]], list[dict[str, str]]]:
    """(chunk id, fact) in story order (chunk, then reply order), and failures rows."""
    if raw_units is None or raw_units.empty:
        return [], []
    rows = raw_units[raw_units["kind"] == "fact"]
    rows = sorted(rows.itertuples(), key=lambda r: (chunk_order.get(str(r.chunk_id), 0), int(r.position)))
    facts, failures = [], []
    for row in rows:
        try:
            facts.append((str(row.chunk_id), PassageFact.model_validate_json(row.payload)))
        except ValidationError as error:
            failures.append(failure_row(doc_id, stage, row, f"raw fact payload: {error.errors()[0]['msg']}"))
    return facts, failures


def fact_row(
    inputs: NarrativeInputs, entity_id: str, chunk: dict[str, Any], fact: PassageFact, key: str
) -> dict[str, Any]:
    """One atomic_facts row: the evidence span in its chunk (the whole chunk when not found)."""
    return located_fact_row(
        inputs,
        entity_id,
        chunk,
        key,
        text=fact.text,
        fact_type=fact.fact_type,
        related=fact.related,
        evidence=fact.evidence,
    )


def combined_profiles(
    inputs: NarrativeInputs,
    relations: pd.DataFrame,
    settings: ExtractFactsSettings,
    stored: list[tuple[str, PassageFact]],
    profiled: list[dict[str, Any]],
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """Facts, attributes and profiles of the profiled entities; counts of facts left out."""
    chunks = {c["chunk_id"]: c for c in inputs.chunks.to_dict("records")}
    wanted = {e["entity_id"]: e for e in profiled}
    by_entity: dict[str, dict[str, dict[str, Any]]] = {}
    counts = {"unresolved": 0, "not_profiled": 0, "over_limit": 0}
    for chunk_id, fact in stored:
        entity_id = inputs.lexicon.resolve_one(fact.entity)
        key = normal_key(fact.text)
        if entity_id is None or chunk_id not in chunks or not key:
            counts["unresolved"] += 1
            continue
        if entity_id not in wanted:
            counts["not_profiled"] += 1
            continue
        facts = by_entity.setdefault(entity_id, {})
        if key in facts:
            continue
        if len(facts) >= settings.max_facts_per_entity:
            counts["over_limit"] += 1
            continue
        facts[key] = fact_row(inputs, entity_id, chunks[chunk_id], fact, key)
    ordinals = dict(zip(inputs.sections["section_id"], inputs.sections["ordinal"].astype(int)))
    out: dict[str, list[dict[str, Any]]] = {
        "atomic_facts": [],
        "entity_attributes": [],
        "entity_profiles": [],
    }
    relation_index = RelationIndex(relations)  # sorted once for every entity
    for entity in profiled:
        kept = by_entity.get(entity["entity_id"], {}).values()
        facts = sorted(kept, key=lambda f: (f["char_start"], f["fact_id"]))
        if not facts:
            continue
        attributes = derive_attributes(inputs, entity, facts, relation_index)
        spread = [ordinals[f["section_id"]] for f in facts if f["section_id"] in ordinals]
        sections = [s for s in as_list(entity.get("section_ids")) if s in ordinals] or [
            f["section_id"] for f in facts
        ]
        add_entity_rows(out, inputs, entity, facts, attributes, sections, spread, PROFILE_METHOD)
    return out, counts
