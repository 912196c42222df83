"""Stage propose_continuity (paper appendix D.1): candidate scene pairs from the scene-entity
graph, and per document the all-pairs, shared-entity and candidate counts."""

from __future__ import annotations

from tasks.continuity.candidates import candidate_rows
from tasks.continuity.inputs import stage_scenes
from tasks.stage import StageContext, StageOutput


def run(ctx: StageContext) -> StageOutput:
    """Candidate scene pairs sharing an entity, and the document's all-pairs / candidate counts."""
    rows, counts = candidate_rows(stage_scenes(ctx), ctx.document.language, ctx.settings.continuity)
    return {
        "continuity_candidates": rows,
        "continuity_counts": [counts],
        "_details": {k: counts[k] for k in ("n_scenes", "all_pairs", "candidates")},
    }
