"""LLM narrative units: one structured request per pack of consecutive chunks up to a token
budget (text, scene headings, known entity names; instructions sent once per pack), each packed
reply split back per chunk, names resolved to canonical ids and evidence quotes located in their
chunk. A pack whose request fails yields a `failures` row (for its first chunk) and no units."""

from __future__ import annotations

import re
from typing import Any

from schemas.responses.narrative import NarrativeReply
from tasks.llm.requests.chunk_packs import Pack, pack_chunks
from tasks.llm.requests.items import run_structured
from tasks.narrative.inputs import (
    AGENT_TYPES,
    NON_PARTICIPANT_TYPES,
    NarrativeInputs,
    event_row,
    interaction_row,
    locate_quote,
    occasion_row,
)
from tasks.narrative.packing import split_narrative
from tasks.stage import StageContext

PROMPT_ID = "extract_narrative/v2"
METHOD = "llm"
MAX_NAMES_IN_PROMPT = 60


def chunk_items(inputs: NarrativeInputs, packs: list[Pack]) -> list[tuple[str, dict[str, Any]]]:
    """(pack id, prompt values) for every pack, with the entity names its chunks mention."""
    headings = {s["section_id"]: str(s["heading"]) for s in inputs.sections.to_dict("records")}
    section_of = dict(zip(inputs.chunks["chunk_id"], inputs.chunks["section_id"]))
    separator = "；" if inputs.language == "zh" else "; "
    items = []
    for pack in packs:
        hits = inputs.entities_in(pack.start, pack.start + len(pack.text))
        names = [headings.get(section_of[m.chunk_id], "") for m in pack.members]
        items.append(
            (
                pack.item_id,
                {
                    "heading": separator.join(h for h in dict.fromkeys(names) if h),
                    "entities": entity_lines(inputs, [e for _, e in hits]),
                    "text": pack.text,
                },
            )
        )
    return items


def member_failures(failures: list[dict[str, str]], packs: list[Pack]) -> list[dict[str, str]]:
    """A failed pack's failures row repeated for each of its chunks: every lost chunk is listed."""
    members = {p.item_id: p.members for p in packs}
    rows = []
    for row in failures:
        for member in members.get(row["item_id"], ()) or [None]:
            rows.append(row if member is None else {**row, "item_id": member.chunk_id})
    return rows


def entity_lines(inputs: NarrativeInputs, entity_ids: list[str]) -> str:
    """One line per known entity: name, type and aliases (ids never reach the prompt)."""
    frame = inputs.entities.set_index("entity_id")
    lines = []
    for entity_id in list(dict.fromkeys(entity_ids))[:MAX_NAMES_IN_PROMPT]:
        row = frame.loc[entity_id]
        aliases = [
            a for a in (list(row["aliases"]) if row["aliases"] is not None else []) if a != row["name"]
        ]
        suffix = f"; also: {', '.join(aliases[:6])}" if aliases else ""
        lines.append(f"- {row['name']} ({row['entity_type']}{suffix})")
    return "\n".join(lines) or "- (none found; use the names as written)"


def llm_units(
    ctx: StageContext, inputs: NarrativeInputs, max_events_per_chunk: int, pack_tokens: int = 0
) -> dict[str, list[dict[str, Any]]]:
    """Narrative units of every chunk through the LLM, plus llm_calls and failures rows."""
    ordered = inputs.chunks.sort_values("char_start")
    packs = pack_chunks(list(ordered.itertuples()), inputs.text, pack_tokens)
    batch = run_structured(ctx, PROMPT_ID, chunk_items(inputs, packs), NarrativeReply)
    per_chunk: dict[str, NarrativeReply] = {}
    for pack in packs:
        if pack.item_id in batch.values:
            parts = split_narrative(batch.values[pack.item_id], pack.members)
            per_chunk.update((m.chunk_id, part) for m, part in zip(pack.members, parts))
    batch.failures = member_failures(batch.failures, packs)
    units = units_from_replies(inputs, per_chunk, max_events_per_chunk)
    return {**units, "llm_calls": batch.calls, "failures": batch.failures}


def units_from_replies(
    inputs: NarrativeInputs, per_chunk: dict[str, NarrativeReply], max_events_per_chunk: int
) -> dict[str, list[dict[str, Any]]]:
    """Events, interactions and occasions of per-chunk replies (occasions merged across chunks)."""
    chunks = {c["chunk_id"]: c for c in inputs.chunks.to_dict("records")}
    sections = {s["section_id"]: s for s in inputs.sections.to_dict("records")}
    events: list[dict[str, Any]] = []
    interactions: list[dict[str, Any]] = []
    occasions: dict[tuple[str, str], dict[str, Any]] = {}
    for chunk_id in sorted(per_chunk, key=lambda c: int(chunks[c]["char_start"])):
        chunk = chunks[chunk_id]
        made = reply_units(
            inputs, per_chunk[chunk_id], chunk, sections[chunk["section_id"]], max_events_per_chunk
        )
        events.extend(made["events"])
        interactions.extend(made["interactions"])
        for occasion in made["occasions"]:
            key = (occasion["occasion_type"], _normal(occasion["description"]))
            merged = occasions.setdefault(key, occasion)
            if merged is not occasion:
                for column in ("participant_ids", "section_ids", "chunk_ids"):
                    merged[column] = list(dict.fromkeys(merged[column] + occasion[column]))
    final = {
        key: occasion_row(
            inputs,
            o["description"],
            o["occasion_type"],
            o["participant_ids"],
            o["setting_id"],
            o["section_ids"],
            o["chunk_ids"],
            METHOD,
            key=key[1],
        )
        for key, o in occasions.items()
    }
    by_draft = {o["occasion_id"]: final[key]["occasion_id"] for key, o in occasions.items()}
    for row in interactions:
        row["occasion_id"] = by_draft.get(row["occasion_id"], row["occasion_id"])
    return {
        "events": events,
        "interactions": interactions,
        "occasions": list(final.values()),
    }


def reply_units(
    inputs: NarrativeInputs,
    reply: NarrativeReply,
    chunk: dict[str, Any],
    section: dict[str, Any],
    max_events: int,
) -> dict[str, list[dict[str, Any]]]:
    """Rows of one chunk's reply: names resolved to ids (unresolved ones dropped), evidence located."""
    scene_setting = inputs.setting_for(section) if section.get("section_kind") == "scene" else None
    chunk_id, chunk_start = chunk["chunk_id"], int(chunk["char_start"])
    occasions = []
    for item in reply.occasions:
        setting = _resolve_place(inputs, item.setting) or (
            scene_setting if item.occasion_type == "scene" else None
        )
        occasions.append(
            occasion_row(
                inputs,
                item.description.strip(),
                item.occasion_type,
                _resolve(inputs, item.participants, NON_PARTICIPANT_TYPES, exclude=True),
                setting,
                [section["section_id"]],
                [chunk_id],
                METHOD,
                key=f"{chunk_id}:{item.description}",
            )
        )
    events = []
    for index, item in enumerate(reply.events[:max_events]):
        start, end = _span(inputs, chunk, item.evidence)
        events.append(
            event_row(
                inputs,
                start,
                end,
                item.description.strip(),
                item.event_type,
                _resolve(inputs, item.participants, NON_PARTICIPANT_TYPES, exclude=True),
                _resolve_place(inputs, item.setting) or scene_setting,
                item.time_cue,
                item.evidence,
                METHOD,
                salt=f"{chunk_id}:{index}",
            )
        )
    scene_occasion = next(
        (o for o in occasions if o["occasion_type"] == "scene"), occasions[0] if occasions else None
    )
    interactions = []
    for index, item in enumerate(reply.interactions):
        start, end = _span(inputs, chunk, item.evidence)
        subjects = _resolve(inputs, [item.subject], AGENT_TYPES)
        in_range = item.event_index is not None and item.event_index < len(events)
        related = events[item.event_index]["event_id"] if in_range else None
        interactions.append(
            interaction_row(
                inputs,
                start,
                end,
                subjects[0] if subjects else None,
                _resolve(inputs, item.objects, AGENT_TYPES),
                item.interaction_type,
                item.description.strip(),
                related,
                scene_occasion["occasion_id"] if scene_occasion else None,
                _is_dialogue(item.evidence, chunk_start, inputs),
                item.evidence,
                METHOD,
                salt=f"{chunk_id}:{index}",
            )
        )
    return {"events": events, "interactions": interactions, "occasions": occasions}


def _resolve(
    inputs: NarrativeInputs, names: list[str], types: frozenset[str], exclude: bool = False
) -> list[str]:
    ids: list[str] = []
    for name in names:
        entity_id = inputs.lexicon.resolve_one(name)
        if entity_id is not None and (inputs.lexicon.types.get(entity_id) in types) != exclude:
            ids.append(entity_id)
    return list(dict.fromkeys(ids))


def _resolve_place(inputs: NarrativeInputs, name: str | None) -> str | None:
    places = _resolve(inputs, [name] if name else [], frozenset({"location"}))
    return places[0] if places else None


def _span(inputs: NarrativeInputs, chunk: dict[str, Any], evidence: str) -> tuple[int, int]:
    """The evidence quote's span in the document, or the whole chunk when the quote is not found."""
    found = locate_quote(str(chunk["text"]), evidence)
    start = int(chunk["char_start"])
    if found is None:
        return start, int(chunk["char_end"])
    return start + found[0], start + found[1]


def _is_dialogue(evidence: str, chunk_start: int, inputs: NarrativeInputs) -> bool:
    # Quoted speech or a screenplay line under a cue counts as dialogue.
    return bool(re.search(r"[\"“”「」]", evidence)) or (
        inputs.kind == "screenplay" and " ".join(evidence.split()) in inputs.spoken_texts
    )


def _normal(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))
