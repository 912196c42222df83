"""Stage extract_graph (paper §3.1.1): the entity–relation backbone of one document.

Writes raw_entities (one per type and normalized name, proxies for missing relation
endpoints), raw_mentions (grounded spans inside chunks) and raw_relations (one per unordered
pair, consolidated over chunks). Offline: `graph_heuristics` reads the text's own structure
(cues, headings, introductions, names); with an LLM: one request per pack of chunks, by default
the combined one (`tasks.graph.combined`) that also returns the narrative units and facts, kept
in raw_units for extract_narrative and extract_facts (empty offline and with `combined = false`).
"""

from __future__ import annotations

from tasks.stage import StageContext, StageOutput
from tasks.graph.heuristics import extract_heuristic
from tasks.graph.combined import extract_combined
from tasks.graph.llm import extract_with_llm

PROMPT_ID = "extract_graph/v1"


def run(ctx: StageContext) -> StageOutput:
    document = ctx.document
    settings = ctx.settings.extract_graph
    rows, warnings = extract_heuristic(
        document.doc_id,
        document.text,
        document.language,
        document.kind,
        document.title,
        ctx.table("sections"),
        ctx.table("chunks"),
        ctx.table("sentences"),
        settings.min_prose_name_count,
        settings.max_description_chars,
    )
    if ctx.llm is None:
        return {**rows, "raw_units": [], "_warnings": warnings}
    # The offline reading supplies the known-name list that keeps per-chunk LLM replies consistent.
    if settings.combined:
        return extract_combined(ctx, rows["raw_entities"])
    return {**extract_with_llm(ctx, PROMPT_ID, rows["raw_entities"]), "raw_units": []}
