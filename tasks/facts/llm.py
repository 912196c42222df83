"""LLM atomic facts, attributes and profile: profiled entities grouped (in order of first
appearance, while the union of their linked chunks fits a token budget), one structured request
per group with the instructions once, each linked chunk once as a numbered excerpt, and one
numbered answer per entity. Evidence quotes are located in their excerpt's chunk; related names
are resolved to canonical ids (unresolved names dropped)."""

from __future__ import annotations

from typing import Any

from schemas.responses.narrative import FactsReply
from tasks.facts.heuristics import normal_key
from tasks.facts.located import located_fact_row
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.request_groups import stable_groups
from tasks.llm.requests.shapes import SHAPES
from tasks.narrative.inputs import NarrativeInputs
from tasks.stage import StageContext

METHOD = "llm"


def entity_item(
    inputs: NarrativeInputs, entity: dict[str, Any], chunks: list[dict[str, Any]]
) -> dict[str, Any]:
    """Prompt values for one entity: its names, type, description and numbered chunk excerpts."""
    headings = dict(zip(inputs.sections["section_id"], inputs.sections["heading"]))
    aliases = [
        a
        for a in (list(entity["aliases"]) if entity.get("aliases") is not None else [])
        if a != entity["name"]
    ]
    excerpts = "\n\n".join(
        f"[{i}] ({headings.get(c['section_id'], '')})\n{c['text']}" for i, c in enumerate(chunks, 1)
    )
    return {
        "name": entity["name"],
        "entity_type": entity["entity_type"],
        "aliases": ", ".join(aliases) or "-",
        "description": entity.get("description") or "-",
        "excerpts": excerpts,
    }


def entity_groups(plan: list[tuple[dict[str, Any], list[dict[str, Any]]]], budget: int, max_items: int):
    """Entity ids grouped in order of first appearance while their chunks' union fits `budget` tokens."""
    ordered = sorted(plan, key=lambda p: (min(int(c["char_start"]) for c in p[1]), p[0]["entity_id"]))
    cost = {c["chunk_id"]: int(c["n_tokens"]) for _, chunks in plan for c in chunks}
    # Boundaries keyed by entity (ids hash names), so they stay put when another scene is edited.
    items = [(e["entity_id"], e["entity_id"], [c["chunk_id"] for c in chunks]) for e, chunks in ordered]
    return stable_groups(items, cost, budget, max_items)


def group_excerpts(chunk_lists: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The union of the entities' chunks, in story order: the numbered excerpts of one request."""
    union = {c["chunk_id"]: c for chunks in chunk_lists for c in chunks}
    return sorted(union.values(), key=lambda c: int(c["char_start"]))


def group_values(
    inputs: NarrativeInputs, members: list[tuple[dict[str, Any], list[dict[str, Any]]]]
) -> dict[str, str]:
    """Prompt values of one group: numbered entity lines and each linked chunk once."""
    excerpts = group_excerpts([chunks for _, chunks in members])
    number = {c["chunk_id"]: i for i, c in enumerate(excerpts, 1)}
    lines = []
    for position, (entity, chunks) in enumerate(members, 1):
        values = entity_item(inputs, entity, [])
        cited = ", ".join(str(number[c["chunk_id"]]) for c in chunks)
        lines.append(
            f"{position}. {values['name']} ({values['entity_type']}); other names: {values['aliases']}; "
            f"known description: {values['description']}; excerpts: {cited}"
        )
    headings = dict(zip(inputs.sections["section_id"], inputs.sections["heading"]))
    return {
        "entities": "\n".join(lines),
        "excerpts": "\n\n".join(
            f"[{i}] ({headings.get(c['section_id'], '')})\n{c['text']}" for i, c in enumerate(excerpts, 1)
        ),
    }


def llm_profiles(
    ctx: StageContext,
    inputs: NarrativeInputs,
    plan: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    max_facts: int,
    budget: int = 6000,
    max_items: int = 20,
) -> dict[str, list[dict[str, Any]]]:
    """Facts, attributes and profiles of the planned entities; failed entities become failures rows."""
    by_id = {entity["entity_id"]: (entity, chunks) for entity, chunks in plan}
    groups = entity_groups(plan, budget, max_items)
    batch = run_grouped(
        ctx,
        SHAPES["extract_facts"],
        groups,
        lambda ids: group_values(inputs, [by_id[i] for i in ids]),
    )
    facts: list[dict[str, Any]] = []
    attributes: list[dict[str, Any]] = []
    profiles: list[dict[str, Any]] = []
    for entity, _ in plan:
        reply = batch.values.get(entity["entity_id"])
        if reply is None:
            continue
        asked = batch.asked_with[entity["entity_id"]]  # excerpt numbers refer to that request's excerpts
        excerpts = group_excerpts([by_id[i][1] for i in asked])
        made = reply_rows(inputs, entity, excerpts, reply, max_facts)
        facts.extend(made["atomic_facts"])
        attributes.extend(made["entity_attributes"])
        profiles.extend(made["entity_profiles"])
    return {
        "atomic_facts": facts,
        "entity_attributes": attributes,
        "entity_profiles": profiles,
        "llm_calls": batch.calls,
        "failures": batch.failures,
    }


def reply_rows(
    inputs: NarrativeInputs,
    entity: dict[str, Any],
    chunks: list[dict[str, Any]],
    reply: FactsReply,
    max_facts: int,
) -> dict[str, list[dict[str, Any]]]:
    """Rows of one entity's reply: facts with located spans, attributes citing them, the profile."""
    entity_id = entity["entity_id"]
    facts: dict[str, dict[str, Any]] = {}
    by_number: dict[int, str] = {}
    for number, item in enumerate(reply.facts, 1):
        key = normal_key(item.text)
        if not key or (key not in facts and len(facts) >= max_facts):
            continue
        if key not in facts:
            chunk = chunks[item.excerpt - 1] if item.excerpt <= len(chunks) else chunks[0]
            facts[key] = located_fact_row(
                inputs,
                entity_id,
                chunk,
                key,
                text=item.text,
                fact_type=item.fact_type,
                related=item.related,
                evidence=item.evidence,
            )
        by_number[number] = facts[key]["fact_id"]
    attributes: dict[str, dict[str, Any]] = {}
    for item in reply.attributes:
        if item.key in attributes:
            continue
        attributes[item.key] = {
            "doc_id": inputs.doc_id,
            "entity_id": entity_id,
            "key": item.key,
            "value": item.value.strip(),
            "fact_ids": list(dict.fromkeys(by_number[n] for n in item.fact_numbers if n in by_number)),
        }
    fact_rows = sorted(facts.values(), key=lambda f: (f["char_start"], f["fact_id"]))
    ordinals = dict(zip(inputs.sections["section_id"], inputs.sections["ordinal"].astype(int)))
    spread = [ordinals[f["section_id"]] for f in fact_rows if f["section_id"] in ordinals]
    profile = {
        "entity_id": entity_id,
        "doc_id": inputs.doc_id,
        "summary": reply.summary.strip(),
        "n_facts": len(fact_rows),
        "first_ordinal": min(spread) if spread else None,
        "last_ordinal": max(spread) if spread else None,
        "method": METHOD,
    }
    return {
        "atomic_facts": fact_rows,
        "entity_attributes": list(attributes.values()),
        "entity_profiles": [profile],
    }
