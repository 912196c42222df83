"""Stage judge_continuity (paper appendix D.1): one production-continuity judgment per
candidate pair, by the pairwise LLM prompt or, offline, by the deterministic rule."""

from __future__ import annotations

from tasks.continuity.inputs import records, stage_scenes
from tasks.continuity.judge import llm_judgments, offline_judgments
from tasks.stage import StageContext, StageOutput


def run(ctx: StageContext) -> StageOutput:
    """One judgment per candidate; with an LLM the closest `max_candidates` are asked, the rest ruled
    offline."""
    scenes = stage_scenes(ctx)
    candidates = sorted(
        records(ctx.table("continuity_candidates")),
        key=lambda c: (c["distance"], c["ordinal_a"], c["candidate_id"]),
    )
    if ctx.llm is None:
        return {"continuity_judgments": offline_judgments(scenes, candidates)}
    limit = ctx.settings.continuity.max_candidates
    asked, ruled = candidates[:limit], candidates[limit:]
    rows, batch = llm_judgments(ctx, scenes, asked)
    output: StageOutput = {
        "continuity_judgments": rows + offline_judgments(scenes, ruled),
        "llm_calls": batch.calls,
        "failures": batch.failures,
    }
    warnings = []
    if batch.failures:
        warnings.append(
            f"{len(batch.failures)} of {len(asked)} candidate pairs failed in the LLM; see failures"
        )
    if ruled:
        warnings.append(
            f"{len(ruled)} candidate pairs beyond max_candidates={limit} judged by the offline rule"
        )
    if warnings:
        output["_warnings"] = warnings
    return output
