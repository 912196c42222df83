"""LLM episode relations, several candidate pairs per request: pairs in source order are grouped
while the episodes they name fit a token budget; each episode of a request is described once
(labelled E1, E2, ... in telling order) and each pair is a numbered line "E3 and E5", answered by
number. A pair a reply leaves out is asked again once; still unanswered, it is a failures row."""

from __future__ import annotations

from typing import Any

from schemas.responses.hierarchy import EpisodeRelationJudgment
from tasks.hierarchy.episode_candidates import Candidate, EpisodeInfo
from tasks.hierarchy.text import shorten, span_label
from tasks.hierarchy.units import as_text, string_list
from tasks.llm.grouped import group_by_shared, run_grouped
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens

PROMPT_ID = "relate_episodes/v3"
SUMMARY_CHARS = 500
_FIELDS = {
    "en": (
        "[{label}] ({sections}) {title}\nParticipants: {participants}\nGoal or conflict: {goal}\n"
        "Summary: {summary}"
    ),
    "zh": "[{label}]（{sections}）{title}\n参与者：{participants}\n目标或冲突：{goal}\n概要：{summary}",
}


def describe(r: Any, names: dict[str, str], language: str, label: str) -> str:
    """One episode as the prompt shows it."""
    people = ", ".join(names.get(p, p) for p in string_list(r.participant_ids)[:8]) or "-"
    return _FIELDS["zh" if language == "zh" else "en"].format(
        label=label,
        sections=span_label(int(r.first_ordinal), int(r.last_ordinal), language),
        title=as_text(r.title),
        participants=people,
        goal=as_text(r.goal) or "-",
        summary=shorten(as_text(r.summary), SUMMARY_CHARS),
    )


def grouped_links(
    ctx: StageContext,
    infos: list[EpisodeInfo],
    candidates: list[Candidate],
    names: dict[str, str],
    link_row: Any,
) -> StageOutput:
    """`episode_links` rows from grouped requests, plus failures and llm_calls rows."""
    doc = ctx.document
    settings = ctx.settings.relate_episodes
    episodes = {str(r.episode_id): r for r in ctx.table("episodes").itertuples()}
    order = {info.episode_id: position for position, info in enumerate(infos)}
    pairs = {
        f"{infos[c.a].episode_id}|{infos[c.b].episode_id}": (infos[c.a].episode_id, infos[c.b].episode_id)
        for c in sorted(candidates, key=lambda c: (c.a, c.b))
    }
    cost = {e: count_tokens(describe(r, names, doc.language, "E0")) for e, r in episodes.items()}
    groups = group_by_shared(list(pairs.items()), cost, settings.pack_tokens, settings.max_pairs_per_request)

    def render(ids: list[str]) -> dict[str, str]:
        shown = sorted({e for i in ids for e in pairs[i]}, key=order.get)
        label = {e: f"E{n}" for n, e in enumerate(shown, 1)}
        joiner = " 与 " if doc.language == "zh" else " and "
        return {
            "document_title": doc.title,
            "episodes": "\n\n".join(describe(episodes[e], names, doc.language, label[e]) for e in shown),
            "pairs": "\n".join(
                f"{n}. {label[pairs[i][0]]}{joiner}{label[pairs[i][1]]}" for n, i in enumerate(ids, 1)
            ),
        }

    batch = run_grouped(ctx, PROMPT_ID, groups, render, EpisodeRelationJudgment, tokens_per_item=80)
    rows = []
    for pair_id, (a_id, b_id) in pairs.items():
        judgment = batch.values.get(pair_id)
        if (
            judgment is None
            or judgment.relation_type == "none"
            or judgment.confidence < settings.min_confidence
        ):
            continue
        source, target = (a_id, b_id) if judgment.direction == "A_to_B" else (b_id, a_id)
        row = (
            judgment.relation_type,
            source,
            target,
            round(judgment.confidence, 4),
            shorten(judgment.reason, 500),
        )
        rows.append(link_row(doc.doc_id, row, "llm"))
    return {"episode_links": rows, "failures": batch.failures, "llm_calls": batch.calls}
