"""Stage canonicalize_entities (paper §3.1.3): link names, aliases, titles and scene
references of one referent to one stable entity.

Blocked candidate pairs (`canonical_profiles`) are decided by named rules (`canonical_rules`); with an LLM,
only the pairs no rule can decide are asked about (both records with descriptions and sample
mentions). Every decision is a merge_decisions row; replaying the 'merge' rows in step order
(`apply_merge_decisions`) gives the raw -> canonical map, so dropping one decision restores the
two entities. With `enabled=False` the map is the identity (the "w/o graph refinement" ablation).

No embedder: name identity is carried by tokens, titles, cues and co-presence; sentence
embeddings place "John Smith" and "Mary Smith" side by side and MiniLM does not read Chinese,
so they would add false candidates, not evidence. The LLM judges the residue with context.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.ids import make_id
from tasks.canonicalize.merge import Decision, apply_merge_decisions, resolve_decisions
from tasks.canonicalize.profiles import Profile, candidate_pairs, profile_entities
from tasks.canonicalize.records import merge_requests
from tasks.canonicalize.rows import canonical_rows
from tasks.canonicalize.rules import rule_decisions
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext, StageOutput


def decision_rows(doc_id: str, decisions: list[Decision]) -> list[dict[str, Any]]:
    """merge_decisions rows, numbered in step order."""
    return [
        {
            "decision_id": make_id("mdec", doc_id, d.left, d.right),
            "doc_id": doc_id,
            "step": step,
            "left": d.left,
            "right": d.right,
            "decision": d.decision,
            "method": d.method,
            "score": float(d.score),
            "reason": d.reason,
        }
        for step, d in enumerate(decisions, start=1)
    ]


def plan_decisions(
    raw_entities: pd.DataFrame,
    raw_mentions: pd.DataFrame,
    raw_relations: pd.DataFrame,
    chunks: pd.DataFrame,
    name_similarity: float,
    max_candidates: int,
) -> tuple[dict[str, Profile], list[Decision], list[tuple[str, str, float]]]:
    """Profiles, rule decisions on blocked pairs, and the pairs the rules leave open."""
    profiles = profile_entities(raw_entities, raw_mentions, chunks)
    pairs = candidate_pairs(profiles, max_candidates)
    decided, undecided = rule_decisions(profiles, pairs, raw_relations, name_similarity)
    return profiles, decided, undecided


def keep_apart(undecided: list[tuple[str, str, float]]) -> list[Decision]:
    """Offline, a pair no rule links stays separate, recorded so the comparison is visible."""
    return [
        Decision(a, b, "separate", "rule:no_evidence", score, "candidates by name, but no rule links them")
        for a, b, score in undecided
    ]


def adjudicate(
    ctx: StageContext,
    undecided: list[tuple[str, str, float]],
    raw_entities: pd.DataFrame,
    raw_mentions: pd.DataFrame,
    chunks: pd.DataFrame,
) -> tuple[list[Decision], list[dict], list[dict]]:
    """LLM decisions on the open pairs; a failed item stays separate and is a failures row."""
    if not undecided:
        return [], [], []
    document = ctx.document
    plan = merge_requests(undecided, raw_entities, raw_mentions, chunks, ctx.settings.canonicalize_entities)
    batch = run_grouped(
        ctx,
        SHAPES["canonicalize_entities"],
        plan.groups,
        lambda ids: plan.values(ids, document.title, document.language),
    )
    decisions = []
    for a, b, score in undecided:
        reply = batch.values.get(f"{a}|{b}")
        if reply is None:
            decisions.append(
                Decision(a, b, "separate", "llm", score, "LLM item failed (see failures): kept separate")
            )
        else:
            decisions.append(Decision(a, b, reply.decision, "llm", score, reply.reason.strip()))
    return decisions, batch.failures, batch.calls


def run(ctx: StageContext) -> StageOutput:
    settings = ctx.settings.canonicalize_entities
    raw_entities, raw_mentions = ctx.table("raw_entities"), ctx.table("raw_mentions")
    raw_relations, chunks = ctx.table("raw_relations"), ctx.table("chunks")
    failures: list[dict] = []
    calls: list[dict] = []
    decisions: list[Decision] = []
    if settings.enabled and len(raw_entities):
        _, decided, undecided = plan_decisions(
            raw_entities,
            raw_mentions,
            raw_relations,
            chunks,
            settings.name_similarity,
            settings.max_candidates_per_entity,
        )
        if ctx.llm is None:
            decided += keep_apart(undecided)
        else:
            judged, failures, calls = adjudicate(ctx, undecided, raw_entities, raw_mentions, chunks)
            decided += judged
        decisions = resolve_decisions(decided)
    rows = decision_rows(ctx.doc_id, decisions)
    mapping = apply_merge_decisions(raw_entities, rows)
    output: StageOutput = {
        "merge_decisions": rows,
        **canonical_rows(
            ctx.doc_id,
            raw_entities,
            raw_mentions,
            raw_relations,
            chunks,
            ctx.table("sections"),
            mapping,
            settings.max_description_chars,
        ),
    }
    if ctx.llm is not None:
        output.update(failures=failures, llm_calls=calls)
    return output
