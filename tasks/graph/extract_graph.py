"""Stage extract_graph (paper §3.1.1): the entity–relation backbone of one document.

Writes raw_entities (one per type and normalized name, proxies for missing relation
endpoints), raw_mentions (grounded spans inside chunks) and raw_relations (one per unordered
pair, consolidated over chunks). Offline: `graph_heuristics` reads the text's own structure
(cues, headings, introductions, names); with an LLM: one request per pack of chunks, by default
the combined one (`tasks.graph.combined`) that also returns the narrative units and facts, kept
in raw_units for extract_narrative and extract_facts (empty offline and with `combined = false`).
"""

from __future__ import annotations

from tasks.graph.combined import extract_combined
from tasks.graph.heuristics import extract_heuristic, offline_characters
from tasks.graph.llm import extract_with_llm
from tasks.stage import StageContext, StageOutput

PROMPT_ID = "extract_graph/v1"


def run(ctx: StageContext) -> StageOutput:
    document = ctx.document
    settings = ctx.settings.extract_graph
    reading = (
        document.doc_id,
        document.text,
        document.language,
        document.kind,
        document.title,
        ctx.table("sections"),
        ctx.table("chunks"),
        ctx.table("sentences"),
        settings.min_prose_name_count,
    )
    if ctx.llm is None:
        rows, warnings = extract_heuristic(*reading, settings.max_description_chars)
        return {**rows, "raw_units": [], "_warnings": warnings}
    # The offline reading's characters are the known-name list that keeps per-chunk LLM replies
    # consistent (only they are read: the rest of that reading would delay the first request).
    characters = offline_characters(*reading)
    if settings.combined:
        return extract_combined(ctx, characters)
    return {**extract_with_llm(ctx, PROMPT_ID, characters), "raw_units": []}
