"""Stage extract_facts (paper §3.1.3): for entities of graph degree at least
`min_degree`, revisit their linked chunks and extract entity-specific atomic facts, a
compact attribute dictionary and a profile summary. With `enabled=False` the three tables
are written empty (the paper's "w/o attributes" ablation).

Offline, facts are the single-entity sentences of the linked chunks typed by word cues;
with an LLM, one structured request per group of entities, or (the default, `[extract_graph]
combined`) none: the facts extract_graph's combined requests stored in raw_units are resolved to
canonical entities, and attributes and summaries derived from them by rule.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.config import ExtractFactsSettings
from tasks.facts.attributes import add_entity_rows, derive_attributes
from tasks.facts.combined import combined_profiles, stored_facts
from tasks.facts.heuristics import METHOD, fact_rows
from tasks.facts.llm import llm_profiles
from tasks.facts.relation_index import RelationIndex
from tasks.narrative.inputs import NarrativeInputs
from tasks.stage import StageContext, StageOutput
from tasks.tables.io import as_list

TABLES = ("atomic_facts", "entity_attributes", "entity_profiles")


def profiled_entities(entities: pd.DataFrame, min_degree: int) -> list[dict[str, Any]]:
    """Non-proxy entities with graph degree >= `min_degree`, most connected first (ties by id)."""
    if entities.empty:
        return []
    chosen = entities[(entities["degree"].astype(int) >= min_degree) & ~entities["is_proxy"].astype(bool)]
    return chosen.sort_values(["degree", "entity_id"], ascending=[False, True]).to_dict("records")


def linked_chunks(inputs: NarrativeInputs, entity: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    """The entity's chunks in story order; over `limit`, an even spread that keeps the first and last."""
    wanted = set(as_list(entity.get("chunk_ids")))
    if not wanted and inputs.mentions is not None and len(inputs.mentions):
        wanted = set(inputs.mentions.loc[inputs.mentions["entity_id"] == entity["entity_id"], "chunk_id"])
    chunks = [c for c in inputs.chunk_rows if c["chunk_id"] in wanted]
    if len(chunks) <= limit:
        return chunks
    if limit == 1:
        return chunks[:1]
    step = (len(chunks) - 1) / (limit - 1)
    return [chunks[round(i * step)] for i in range(limit)]


def heuristic_profiles(
    inputs: NarrativeInputs, relations: pd.DataFrame, settings: ExtractFactsSettings
) -> dict[str, list[dict[str, Any]]]:
    """Facts, attributes and profiles of every profiled entity from its linked chunks' sentences."""
    out: dict[str, list[dict[str, Any]]] = {table: [] for table in TABLES}
    ordinals = dict(zip(inputs.sections["section_id"], inputs.sections["ordinal"].astype(int)))
    relation_index = RelationIndex(relations)  # sorted once for every entity
    for entity in profiled_entities(inputs.entities, settings.min_degree):
        chunks = linked_chunks(inputs, entity, settings.max_chunks_per_entity)
        facts = fact_rows(
            inputs, entity["entity_id"], [c["chunk_id"] for c in chunks], settings.max_facts_per_entity
        )
        if not facts:
            continue
        attributes = derive_attributes(inputs, entity, facts, relation_index)
        sections = [s for s in as_list(entity.get("section_ids")) if s in ordinals] or [
            f["section_id"] for f in facts
        ]
        spread = [ordinals[s] for s in sections if s in ordinals]
        add_entity_rows(out, inputs, entity, facts, attributes, sections, spread, METHOD)
    return out


def finalize(produced: dict[str, list[dict[str, Any]]]) -> dict[str, list[dict[str, Any]]]:
    """Deterministic order: facts by entity then span, attributes by entity and key, profiles by entity."""
    return {
        "atomic_facts": sorted(
            produced["atomic_facts"], key=lambda r: (r["entity_id"], r["char_start"], r["fact_id"])
        ),
        "entity_attributes": sorted(produced["entity_attributes"], key=lambda r: (r["entity_id"], r["key"])),
        "entity_profiles": sorted(produced["entity_profiles"], key=lambda r: r["entity_id"]),
    }


def combined_output(
    ctx: StageContext, inputs: NarrativeInputs, settings: ExtractFactsSettings
) -> StageOutput:
    """Facts extract_graph's combined requests returned (raw_units), resolved without a call."""
    order = {c: i for i, c in enumerate(inputs.chunks["chunk_id"])}
    stored, failures = stored_facts(ctx.table("raw_units"), ctx.doc_id, ctx.stage, order)
    profiled = profiled_entities(inputs.entities, settings.min_degree)
    produced, counts = combined_profiles(inputs, ctx.table("relations"), settings, stored, profiled)
    output: dict[str, Any] = dict(finalize(produced))
    output["llm_calls"], output["failures"] = [], failures
    warnings = []
    if counts["unresolved"]:
        warnings.append(f"{counts['unresolved']} combined-extraction fact(s) named no known entity (dropped)")
    if failures:
        warnings.append(f"{len(failures)} stored fact(s) could not be read; see failures")
    output["_warnings"] = warnings
    return output


def run(ctx: StageContext) -> StageOutput:
    """Atomic facts, attributes and profiles of one document's profiled entities (empty when disabled)."""
    settings = ctx.settings.extract_facts
    if not settings.enabled:
        return {table: [] for table in TABLES}
    inputs = NarrativeInputs.from_tables(
        ctx.document,
        {name: ctx.table(name) for name in ("sections", "chunks", "sentences", "entities", "mentions")},
    )
    if ctx.llm is None:
        return dict(finalize(heuristic_profiles(inputs, ctx.table("relations"), settings)))
    if ctx.settings.extract_graph.combined:
        return combined_output(ctx, inputs, settings)
    plan = [
        (entity, chunks)
        for entity in profiled_entities(inputs.entities, settings.min_degree)
        if (chunks := linked_chunks(inputs, entity, settings.max_chunks_per_entity))
    ]
    produced = llm_profiles(
        ctx,
        inputs,
        plan,
        settings.max_facts_per_entity,
        settings.pack_tokens,
        settings.max_entities_per_request,
    )
    output: dict[str, Any] = dict(finalize(produced))
    output["llm_calls"], output["failures"] = produced["llm_calls"], produced["failures"]
    if produced["failures"]:
        output["_warnings"] = [
            f"{len(produced['failures'])} of {len(plan)} entities failed in the LLM; see failures"
        ]
    return output
