"""Episode titles and summaries from the LLM (assemble_episodes with a server configured):
several episodes per request, each described by its span, participants and units in source
order. An episode the LLM fails on keeps its composed text, and the failure is listed."""

from __future__ import annotations

from schemas.responses.hierarchy import EpisodeDescription
from tasks.hierarchy.text import shorten, span_label
from tasks.llm.grouped import group_items, run_grouped
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens

PROMPT_ID = "assemble_episodes/v2"


def _llm_values(draft, names: dict[str, str], document_title: str, language: str) -> dict[str, str]:
    first, last = min(u.ordinal for u in draft.units), max(u.ordinal for u in draft.units)
    people = [names.get(p, p) for p, _ in draft.people.most_common(8)]
    lines = [
        f"- [{u.kind}/{u.unit_type or '-'}, {span_label(u.ordinal, u.ordinal, language)}"
        f"{', ' + u.time_cue if u.time_cue else ''}] {shorten(u.description, 300)}"
        for u in draft.units
        if u.description
    ]
    return {
        "document_title": document_title,
        "sections": span_label(first, last, language),
        "participants": ", ".join(people) or "-",
        "units": "\n".join(lines) or "-",
    }


def _episode_block(number: int, values: dict[str, str], language: str) -> str:
    if language == "zh":
        return (
            f"{number}. 范围：{values['sections']}；参与者：{values['participants']}\n"
            f"按原文顺序排列的叙事单元：\n{values['units']}"
        )
    return (
        f"{number}. Covers: {values['sections']}; participants: {values['participants']}\n"
        f"Units, in source order:\n{values['units']}"
    )


def describe_episodes(
    ctx: StageContext, drafts: dict, names: dict[str, str], texts: dict[str, dict], methods: dict[str, str]
) -> StageOutput:
    """Replace `texts[eid]` with the LLM's title, summary and goal for each episode it answered
    (`methods[eid]` becomes "llm"); returns the stage's failures and llm_calls rows."""
    doc, settings = ctx.document, ctx.settings.assemble_episodes
    values = {eid: _llm_values(d, names, doc.title, doc.language) for eid, d in drafts.items()}
    groups = group_items(
        list(values),
        [count_tokens(v["units"]) for v in values.values()],
        settings.pack_tokens,
        settings.max_per_request,
    )
    batch = run_grouped(
        ctx,
        PROMPT_ID,
        groups,
        lambda group: {
            "document_title": doc.title,
            "episodes": "\n\n".join(
                _episode_block(n, values[e], doc.language) for n, e in enumerate(group, 1)
            ),
        },
        EpisodeDescription,
        tokens_per_item=300,
    )
    for eid, reply in batch.values.items():
        if reply.title.strip() and reply.summary.strip():  # blank text keeps the composed one
            texts[eid] = {
                "title": shorten(reply.title, 150),
                "summary": reply.summary.strip(),
                "goal": reply.goal.strip(),
            }
            methods[eid] = "llm"
    # Failed items keep the composed text (method says so) and are listed in failures.
    return {"failures": batch.failures, "llm_calls": batch.calls}
