"""Stage chain_continuity (paper appendix D.1): continuity graph -> preliminary chains ->
chain critic (LLM prompt, or the offline critic) -> final chains."""

from __future__ import annotations

from tasks.continuity.chains import (
    chain_row,
    continuity_graph,
    final_chains,
    offline_critique,
    preliminary_groups,
)
from tasks.continuity.critic import llm_critiques
from tasks.continuity.inputs import records, stage_scenes
from tasks.stage import StageContext, StageOutput


def run(ctx: StageContext) -> StageOutput:
    """Preliminary chains with the critic's verdict, then the final chains."""
    scenes = stage_scenes(ctx)
    settings = ctx.settings.continuity
    judgments = sorted(records(ctx.table("continuity_judgments")), key=lambda j: j["judgment_id"])
    graph = continuity_graph(judgments, settings.min_confidence)
    groups = preliminary_groups(graph, scenes, settings.chains)
    method = "offline_rule" if ctx.llm is None else "llm"
    stub = {
        "decision": "keep",
        "coherence_score": None,
        "confidence": None,
        "weak_edges": [],
        "rationale": "",
    }
    drafts = [
        chain_row(scenes, "preliminary", i, g, judgments, stub, method, None) for i, g in enumerate(groups)
    ]
    output: StageOutput = {}
    if ctx.llm is None:
        critiques = {d["chain_id"]: offline_critique(scenes, d["section_ids"], graph) for d in drafts}
    else:
        critiques, batch = llm_critiques(ctx, scenes, drafts, judgments)
        output.update({"llm_calls": batch.calls, "failures": batch.failures})
        if batch.failures:
            output["_warnings"] = [
                f"{len(batch.failures)} of {len(drafts)} chains failed in the critic; see failures"
            ]
    preliminary = [
        chain_row(
            scenes,
            "preliminary",
            d["ordinal"],
            d["section_ids"],
            judgments,
            critiques[d["chain_id"]],
            method,
            None,
        )
        for d in drafts
        if d["chain_id"] in critiques
    ]
    finals = final_chains(scenes, preliminary, critiques, judgments)
    output["continuity_chains"] = preliminary + finals
    output["_details"] = {
        "edges": graph.number_of_edges(),
        "preliminary": len(preliminary),
        "final": len(finals),
    }
    return output
