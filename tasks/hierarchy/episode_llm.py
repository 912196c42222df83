"""Episode titles and summaries from the LLM (assemble_episodes with a server configured):
several episodes per request, each a compact block: its span and participants, then one short
line per unit in source order (type, time cue, the first words of its description), a section
line only where the section changes, and repeated descriptions shown once. An episode the LLM
fails on keeps its composed text, and the failure is listed."""

from __future__ import annotations

from collections.abc import Sequence

from schemas.responses.hierarchy import EpisodeDescription
from tasks.hierarchy.text import shorten, span_label
from tasks.hierarchy.units import Unit
from tasks.llm.grouped import group_items, run_grouped
from tasks.llm.records import first_sentences
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens

PROMPT_ID = "assemble_episodes/v3"
UNIT_WORDS = {"en": 25, "zh": 50}  # a unit's description: its first sentence(s) up to this many words
MAX_PARTICIPANTS = 8


def unit_lines(units: Sequence[Unit], language: str) -> list[str]:
    """One line per unit with a description, in source order; a `(section n)` line before each
    section's units when the units span several sections; a description repeated within the
    episode is shown once."""
    zh = language == "zh"
    several = len({u.ordinal for u in units}) > 1
    lines: list[str] = []
    seen: set[str] = set()
    section = None
    for u in units:
        text = first_sentences(u.description, UNIT_WORDS["zh" if zh else "en"])
        if not text or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        if several and u.ordinal != section:
            section = u.ordinal
            label = span_label(u.ordinal, u.ordinal, language)
            lines.append(f"（{label}）" if zh else f"({label})")
        kind = (u.unit_type or u.kind) + (f" [{u.time_cue}]" if u.time_cue else "")
        lines.append(f"- {kind}: {text}")
    return lines


def episode_block(number: int, units: Sequence[Unit], people: Sequence[str], language: str) -> str:
    """One numbered episode of a request."""
    span = span_label(min(u.ordinal for u in units), max(u.ordinal for u in units), language)
    cast = ", ".join(people[:MAX_PARTICIPANTS]) or "-"
    head = f"{number}. {span}" + (f"；参与者：{cast}" if language == "zh" else f"; participants: {cast}")
    return "\n".join([head, *(unit_lines(units, language) or ["-"])])


def group_blocks(blocks: dict[str, str], pack_tokens: int, max_per_request: int) -> list[list[str]]:
    """Consecutive episodes grouped while their blocks fit `pack_tokens`."""
    return group_items(list(blocks), [count_tokens(b) for b in blocks.values()], pack_tokens, max_per_request)


def renumbered(block: str, number: int) -> str:
    """A block written as episode 0, numbered for its place in a request."""
    return f"{number}{block[1:]}"


def describe_episodes(
    ctx: StageContext,
    drafts: dict,
    names: dict[str, str],
    texts: dict[str, dict[str, str]],
    methods: dict[str, str],
) -> StageOutput:
    """Replace `texts[eid]` with the LLM's title, summary and goal for each episode it answered
    (`methods[eid]` becomes "llm"); returns the stage's failures and llm_calls rows."""
    doc, settings = ctx.document, ctx.settings.assemble_episodes
    blocks = {
        eid: episode_block(0, d.units, [names.get(p, p) for p, _ in d.people.most_common()], doc.language)
        for eid, d in drafts.items()
    }
    groups = group_blocks(blocks, settings.pack_tokens, settings.max_per_request)
    batch = run_grouped(
        ctx,
        PROMPT_ID,
        groups,
        lambda group: {
            "document_title": doc.title,
            "episodes": "\n\n".join(renumbered(blocks[e], n) for n, e in enumerate(group, 1)),
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
