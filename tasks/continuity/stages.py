"""The continuity stages (paper appendix D.1), each `run(ctx) -> {table: rows}`:
`propose_continuity` (candidates and counts from the scene-entity graph),
`judge_continuity` (one pairwise judgment per candidate: LLM, or the offline rule) and
`chain_continuity` (continuity graph -> preliminary chains -> chain critic -> final chains)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from tasks.continuity.candidates import candidate_rows
from tasks.continuity.chains import (chain_row, continuity_graph, final_chains, offline_critique,
                                     preliminary_groups)
from tasks.continuity.critic import llm_critiques
from tasks.continuity.judge import llm_judgments, offline_judgments
from tasks.continuity.scenes import SceneGraph, scene_graph
from tasks.stage import StageContext, StageOutput

SCENE_TABLES = ("sections", "entities", "mentions", "occasions", "events", "interactions", "atomic_facts")


def _scenes(ctx: StageContext) -> SceneGraph:
    return scene_graph(ctx.doc_id, {name: ctx.tables[name] for name in SCENE_TABLES if name in ctx.tables})


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    return frame.to_dict("records") if len(frame) else []


def run_propose(ctx: StageContext) -> StageOutput:
    """Candidate scene pairs sharing an entity, and the document's all-pairs / candidate counts."""
    rows, counts = candidate_rows(_scenes(ctx), ctx.document.language, ctx.settings.continuity)
    return {"continuity_candidates": rows, "continuity_counts": [counts],
            "_details": {k: counts[k] for k in ("n_scenes", "all_pairs", "candidates")}}


def run_judge(ctx: StageContext) -> StageOutput:
    """One judgment per candidate; with an LLM the closest `max_candidates` are asked, the rest ruled offline."""
    scenes = _scenes(ctx)
    candidates = sorted(_records(ctx.table("continuity_candidates")),
                        key=lambda c: (c["distance"], c["ordinal_a"], c["candidate_id"]))
    if ctx.llm is None:
        return {"continuity_judgments": offline_judgments(scenes, candidates)}
    limit = ctx.settings.continuity.max_candidates
    asked, ruled = candidates[:limit], candidates[limit:]
    rows, batch = llm_judgments(ctx, scenes, asked)
    output: StageOutput = {"continuity_judgments": rows + offline_judgments(scenes, ruled),
                           "llm_calls": batch.calls, "failures": batch.failures}
    warnings = []
    if batch.failures:
        warnings.append(f"{len(batch.failures)} of {len(asked)} candidate pairs failed in the LLM; see failures")
    if ruled:
        warnings.append(f"{len(ruled)} candidate pairs beyond max_candidates={limit} judged by the offline rule")
    if warnings:
        output["_warnings"] = warnings
    return output


def run_chains(ctx: StageContext) -> StageOutput:
    """Preliminary chains with the critic's verdict, then the final chains."""
    scenes = _scenes(ctx)
    settings = ctx.settings.continuity
    judgments = sorted(_records(ctx.table("continuity_judgments")), key=lambda j: j["judgment_id"])
    graph = continuity_graph(judgments, settings.min_confidence)
    groups = preliminary_groups(graph, scenes, settings.chains)
    method = "offline_rule" if ctx.llm is None else "llm"
    stub = {"decision": "keep", "coherence_score": None, "confidence": None, "weak_edges": [], "rationale": ""}
    drafts = [chain_row(scenes, "preliminary", i, g, judgments, stub, method, None) for i, g in enumerate(groups)]
    output: StageOutput = {}
    if ctx.llm is None:
        critiques = {d["chain_id"]: offline_critique(scenes, d["section_ids"], graph) for d in drafts}
    else:
        critiques, batch = llm_critiques(ctx, scenes, drafts, judgments)
        output.update({"llm_calls": batch.calls, "failures": batch.failures})
        if batch.failures:
            output["_warnings"] = [f"{len(batch.failures)} of {len(drafts)} chains failed in the critic; see failures"]
    preliminary = [chain_row(scenes, "preliminary", d["ordinal"], d["section_ids"], judgments, critiques[d["chain_id"]],
                             method, None) for d in drafts if d["chain_id"] in critiques]
    finals = final_chains(scenes, preliminary, critiques, judgments)
    output["continuity_chains"] = preliminary + finals
    output["_details"] = {"edges": graph.number_of_edges(), "preliminary": len(preliminary), "final": len(finals)}
    return output
