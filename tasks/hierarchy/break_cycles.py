"""SABER episode-graph cleaning stage (paper appendix A.1, Algorithm 1; ablation B.9).

Reads the predicted `episode_links` and writes one `episode_relations` row per link with its
status under the configured mode (raw / heuristic / saber) and weight s(e) = confidence ·
type weight, plus one `saber_actions` row per removal, mark and judgment. The algorithm is
tasks/hierarchy/saber.py; this stage only supplies the adjudicator: the LLM when one is configured
(batched shortcut questions; a failed question is a failures row and counts as uncertain),
else saber_model.heuristic_adjudicator. The adjudicator can only answer questions: it never adds,
reverses or creates edges. Outside raw mode the kept edges must form a DAG, or the stage fails.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

import networkx as nx
import pandas as pd

from schemas.config import BreakCyclesSettings
from schemas.ids import make_id
from schemas.responses.hierarchy import ShortcutJudgment
from tasks.hierarchy.saber import clean_episode_graph
from tasks.hierarchy.saber_aliases import aliased, restored
from tasks.hierarchy.saber_model import (
    Adjudicator,
    EpisodeEdge,
    SaberResult,
    ShortcutQuestion,
    ShortcutVerdict,
    SupportCheck,
    effective_weight,
    heuristic_adjudicator,
)
from tasks.hierarchy.shortcut_requests import shortcut_requests
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.items import LLMBatch
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext, StageOutput


class CyclicGraphError(RuntimeError):
    """The cleaned episode graph still has a cycle (a broken invariant, never expected)."""


def type_weights(settings: BreakCyclesSettings) -> dict[str, float]:
    """w_type per relation type from the settings; contrasts never weigh on progression."""
    return {
        "causes": settings.causes_weight,
        "precedes": settings.precedes_weight,
        "elaborates": settings.elaborates_weight,
        "contrasts": 0.0,
    }


def link_edges(links: pd.DataFrame) -> list[EpisodeEdge]:
    """The predicted links as SABER edges (relation_id = link_id)."""
    return [
        EpisodeEdge(
            str(r.link_id),
            str(r.source_episode_id),
            str(r.target_episode_id),
            str(r.relation_type),
            float(r.confidence),
        )
        for r in links.itertuples()
    ]


def causal_support(edges: Sequence[EpisodeEdge], weights: Mapping[str, float]) -> SupportCheck:
    """Support check: a direct 'causes' claim may go only if a hop of its path is itself causal.

    A hop's type is that of the strongest link of its ordered pair, the one SABER keeps.
    """
    best: dict[tuple[str, str], EpisodeEdge] = {}
    for e in sorted(edges, key=lambda e: e.relation_id):
        if e.relation_type == "contrasts":
            continue
        pair = (e.source, e.target)
        if pair not in best or effective_weight(e, weights) > effective_weight(best[pair], weights):
            best[pair] = e

    def preserved(edge: EpisodeEdge, path: tuple[str, ...]) -> bool:
        if edge.relation_type != "causes":
            return True
        return any(
            best.get(hop) is not None and best[hop].relation_type == "causes" for hop in zip(path, path[1:])
        )

    return preserved


def assert_acyclic(result: SaberResult) -> None:
    """Raise CyclicGraphError when the kept progression edges contain a directed cycle."""
    graph = nx.DiGraph()
    graph.add_edges_from((e.source, e.target) for e in result.kept_edges())
    if not nx.is_directed_acyclic_graph(graph):
        cycle = nx.find_cycle(graph)
        raise CyclicGraphError(f"kept episode relations are cyclic: {' -> '.join(a for a, _ in cycle)}")


def clean_links(
    links: pd.DataFrame, settings: BreakCyclesSettings, adjudicate: Adjudicator | None = None
) -> SaberResult:
    """Run SABER over one document's links in the configured mode (checked acyclic unless raw)."""
    edges = link_edges(links)
    weights = type_weights(settings)
    judge = adjudicate if adjudicate is not None else partial(heuristic_adjudicator, type_weights=weights)
    result = clean_episode_graph(
        edges,
        mode=settings.mode,
        type_weights=weights,
        adjudicate=judge,
        support_preserved=causal_support(edges, weights),
        max_adjudications=settings.max_adjudications,
        max_path_hops=settings.max_path_hops,
    )
    if settings.mode != "raw":
        assert_acyclic(result)
    return result


def output_rows(
    doc_id: str, result: SaberResult, settings: BreakCyclesSettings
) -> dict[str, list[dict[str, Any]]]:
    """`episode_relations` (one row per link) and `saber_actions` rows of one cleaning run."""
    weights = type_weights(settings)
    relations = [
        {
            "relation_id": e.relation_id,
            "doc_id": doc_id,
            "source_episode_id": e.source,
            "target_episode_id": e.target,
            "relation_type": e.relation_type,
            "confidence": float(e.confidence),
            "weight": round(effective_weight(e, weights), 6),
            "status": result.status[e.relation_id],
            "mode": settings.mode,
        }
        for e in result.edges
    ]
    actions = [
        {
            "action_id": make_id("sab", doc_id, a.step, a.action, a.relation_id),
            "doc_id": doc_id,
            "step": a.step,
            "action": a.action,
            "relation_id": a.relation_id,
            "source_episode_id": a.source,
            "target_episode_id": a.target,
            "rule": a.rule,
            "reason": a.reason,
            "indirect_path": list(a.indirect_path),
        }
        for a in result.actions
    ]
    return {"episode_relations": relations, "saber_actions": actions}


def llm_adjudicator(
    ctx: StageContext, episodes: pd.DataFrame, collected: LLMBatch[ShortcutJudgment]
) -> Adjudicator:
    """An adjudicator asking the LLM about every shortcut question at once, several per request
    (episodes shared by the questions of a request are described once).

    Failed questions are collected as failures rows and answered "uncertain" (the edge stays).
    """
    by_id = {str(r.episode_id): r for r in episodes.itertuples()}
    settings, doc = ctx.settings.break_cycles, ctx.document

    def judge(questions: list[ShortcutQuestion]) -> list[ShortcutVerdict]:
        plan = shortcut_requests(questions, by_id, doc.language, settings)
        batch = run_grouped(
            ctx,
            SHAPES["break_cycles"],
            plan.groups,
            lambda ids: plan.values(ids, doc.title),
        )
        collected.extend(batch)
        verdicts = []
        for q in questions:
            reply = batch.values.get(q.edge.relation_id)
            verdicts.append(
                ShortcutVerdict(reply.decision, reply.reason)
                if reply is not None
                else ShortcutVerdict(
                    "uncertain", "LLM adjudication failed (see failures); treated as uncertain"
                )
            )
        return verdicts

    return judge


def run(ctx: StageContext) -> StageOutput:
    settings = ctx.settings.break_cycles
    collected: LLMBatch[ShortcutJudgment] = LLMBatch()
    # SABER sees episodes and links by their place in the story, not by ids that move with an edit.
    links, episodes, alias = aliased(ctx.table("episode_links"), ctx.table("episodes"))
    asks = ctx.llm is not None and settings.mode == "saber"
    judge = llm_adjudicator(ctx, episodes, collected) if asks else None
    result = restored(clean_links(links, settings, judge), alias)
    output: StageOutput = output_rows(ctx.doc_id, result, settings)
    if ctx.llm is not None:
        link_of = {a: r for r, a in alias.relations.items()}
        failures = [{**f, "item_id": link_of.get(f["item_id"], f["item_id"])} for f in collected.failures]
        output.update(failures=failures, llm_calls=collected.calls)
    return output
