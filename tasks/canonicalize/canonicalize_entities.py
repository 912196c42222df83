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

from schemas.responses.graph import MergeJudgement
from tasks.canonicalize.merge import apply_merge_decisions, resolve_decisions
from tasks.canonicalize.profiles import Profile, candidate_pairs, profile_entities
from tasks.canonicalize.rules import Decision, rule_decisions
from tasks.canonicalize.rows import canonical_rows
from tasks.stage import StageContext, StageOutput
from schemas.ids import make_id
from tasks.llm.grouped import group_by_shared, run_grouped
from tasks.text import count_tokens
from tasks.tables.io import as_list

PROMPT_ID = "canonicalize_entities/v2"
SAMPLE_MENTIONS = 3
SAMPLE_CONTEXT = 90


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


def entity_record(raw: dict[str, Any], mentions: pd.DataFrame, chunk_text: dict[str, tuple[int, str]]) -> str:
    """One entity as the LLM sees it: name, type, aliases, description and sample mentions in context."""
    samples = []
    for m in mentions.head(SAMPLE_MENTIONS).itertuples():
        start, text = chunk_text[m.chunk_id]
        left = max(0, m.char_start - start - SAMPLE_CONTEXT)
        samples.append("- …" + " ".join(text[left : m.char_end - start + SAMPLE_CONTEXT].split()) + "…")
    return "\n".join(
        [
            f"name: {raw['name']}",
            f"type: {raw['entity_type']}",
            f"aliases: {', '.join(as_list(raw['surfaces'])) or '-'}",
            f"description: {raw['description'] or '-'}",
            "sample mentions:",
            *(samples or ["- (none)"]),
        ]
    )


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
    records = raw_entities.set_index("raw_entity_id").to_dict("index")
    chunk_text = {c.chunk_id: (int(c.char_start), c.text) for c in chunks.itertuples()}
    by_entity = {k: g.sort_values("char_start") for k, g in raw_mentions.groupby("raw_entity_id")}
    empty = raw_mentions.head(0)
    described = {
        raw_id: entity_record(row, by_entity.get(raw_id, empty), chunk_text)
        for raw_id, row in records.items()
        if any(raw_id in (a, b) for a, b, _ in undecided)
    }
    document = ctx.document
    settings = ctx.settings.canonicalize_entities
    pair_ids = {f"{a}|{b}": (a, b) for a, b, _ in undecided}
    cost = {raw_id: count_tokens(text) for raw_id, text in described.items()}
    groups = group_by_shared(
        list(pair_ids.items()), cost, settings.pack_tokens, settings.max_pairs_per_request
    )

    def render(ids: list[str]) -> dict[str, str]:
        shown = list(dict.fromkeys(r for i in ids for r in pair_ids[i]))
        label = {raw_id: f"R{n}" for n, raw_id in enumerate(shown, 1)}
        return {
            "title": document.title,
            "language": document.language,
            "records": "\n\n".join(f"[{label[r]}]\n{described[r]}" for r in shown),
            "pairs": "\n".join(
                f"{n}. {label[pair_ids[i][0]]} and {label[pair_ids[i][1]]}" for n, i in enumerate(ids, 1)
            ),
        }

    batch = run_grouped(ctx, PROMPT_ID, groups, render, MergeJudgement, tokens_per_item=120)
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
