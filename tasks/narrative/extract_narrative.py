"""Stage extract_narrative (paper §3.1.2): events, interactions and occasions of one document,
grounded in source spans and linked to canonical entities.

Offline, the text's structure drives a deterministic extractor (screenplay scenes, cues and
dialogue turns; prose narration and attributed quotes); with an LLM, one structured request
per pack of chunks, or (the default, `[extract_graph] combined`) no request at all: the units
extract_graph's combined requests stored in raw_units are resolved to canonical entities. All
fill the same three tables.
"""

from __future__ import annotations

from typing import Any

from tasks.narrative.combined import stored_replies, unresolved_names
from tasks.narrative.inputs import NarrativeInputs, sort_units
from tasks.narrative.llm import llm_units, units_from_replies
from tasks.narrative.prose_units import prose_units
from tasks.narrative.screenplay_units import screenplay_units
from tasks.stage import StageContext, StageOutput

TABLES = ("events", "interactions", "occasions")
KEYS = {"events": "event_id", "interactions": "interaction_id", "occasions": "occasion_id"}


def heuristic_units(inputs: NarrativeInputs, max_events_per_chunk: int) -> dict[str, list[dict[str, Any]]]:
    """Narrative units from the structure of the text: screenplay scenes or prose sections."""
    if inputs.entities.empty or inputs.chunks.empty:
        return {table: [] for table in TABLES}
    if inputs.kind == "screenplay":
        return screenplay_units(inputs, max_events_per_chunk)
    return prose_units(inputs, max_events_per_chunk)


def finalize(
    units: dict[str, list[dict[str, Any]]], section_order: dict[str, int]
) -> dict[str, list[dict[str, Any]]]:
    """Each table in story order without duplicate ids; links to dropped rows cleared."""
    out = {table: sort_units(units.get(table, []), KEYS[table]) for table in TABLES}
    out["occasions"] = sorted(
        out["occasions"],
        key=lambda r: (
            min((section_order.get(s, 0) for s in r["section_ids"]), default=0),
            r["occasion_type"] != "scene",
            r["occasion_id"],
        ),
    )
    event_ids = {row["event_id"] for row in out["events"]}
    occasion_ids = {row["occasion_id"] for row in out["occasions"]}
    for row in out["interactions"]:
        row["event_id"] = row["event_id"] if row["event_id"] in event_ids else None
        row["occasion_id"] = row["occasion_id"] if row["occasion_id"] in occasion_ids else None
    return out


def combined_output(
    ctx: StageContext, inputs: NarrativeInputs, limit: int, order: dict[str, int]
) -> StageOutput:
    """The units extract_graph's combined requests returned (raw_units), resolved without a call."""
    replies, failures = stored_replies(ctx.table("raw_units"), ctx.doc_id, ctx.stage)
    output: dict[str, Any] = dict(finalize(units_from_replies(inputs, replies, limit), order))
    output["llm_calls"], output["failures"] = [], failures
    warnings = []
    missing = unresolved_names(replies, inputs.lexicon.resolve_one)
    if missing:
        warnings.append(f"{missing} name(s) in the combined extraction's units matched no entity (left out)")
    if failures:
        warnings.append(f"{len(failures)} stored unit(s) could not be read; see failures")
    output["_warnings"] = warnings
    return output


def run(ctx: StageContext) -> StageOutput:
    """Events, interactions and occasions of one document (heuristic offline, packed LLM otherwise)."""
    inputs = NarrativeInputs.from_tables(
        ctx.document,
        {name: ctx.table(name) for name in ("sections", "chunks", "sentences", "entities", "mentions")},
    )
    limit = ctx.settings.extract_narrative.max_events_per_chunk
    order = dict(zip(inputs.sections["section_id"], inputs.sections["ordinal"].astype(int)))
    if ctx.llm is None:
        return dict(finalize(heuristic_units(inputs, limit), order))
    if ctx.settings.extract_graph.combined:
        return combined_output(ctx, inputs, limit, order)
    produced = llm_units(ctx, inputs, limit, ctx.settings.extract_narrative.pack_tokens)
    output: dict[str, Any] = dict(finalize(produced, order))
    output["llm_calls"], output["failures"] = produced["llm_calls"], produced["failures"]
    if produced["failures"]:
        output["_warnings"] = [
            f"{len(produced['failures'])} of {len(inputs.chunks)} chunks failed in the LLM; see failures"
        ]
    return output
