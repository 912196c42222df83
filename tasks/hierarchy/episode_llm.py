"""Episode titles and summaries from the LLM (assemble_episodes with a server configured):
several episodes per request, each a compact block: its span and participants, then one short
line per unit in source order (type, time cue, the first words of its description), a section
line only where the section changes, and repeated descriptions shown once; a long episode shows
its most telling units (about 300 tokens of them) and says how many others were left out. An episode the LLM
fails on keeps its composed text, and the failure is listed."""

from __future__ import annotations

import re
from collections.abc import Sequence

from tasks.hierarchy.episode_text import salience
from tasks.hierarchy.text import shorten, span_label
from tasks.hierarchy.units import Unit, has_cue
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.records import first_sentences
from tasks.llm.requests.request_groups import stable_groups
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens

UNIT_WORDS = {"en": 25, "zh": 50}  # a unit's description: its first sentence(s) up to this many words
MAX_PARTICIPANTS = 8
EPISODE_TOKENS = 300  # an episode's unit lines: its most telling units up to about this many tokens
LINE_TOKENS = 4  # "- type: " before a unit's text


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


def telling_units(units: Sequence[Unit], language: str, budget: int = EPISODE_TOKENS) -> list[Unit]:
    """The units whose lines fit `budget` tokens, the most telling first (turning points,
    conflicts and stated goals before scene frames and small talk), back in source order."""
    words = UNIT_WORDS["zh" if language == "zh" else "en"]

    def weight(u: Unit) -> float:
        stakes = has_cue(u.description, "goal") or has_cue(u.description, "conflict")
        return salience(u) + (1.0 if stakes else 0.0)

    kept: list[Unit] = []
    used = 0
    for u in sorted((u for u in units if u.description.strip()), key=lambda u: (-weight(u), u.index)):
        cost = count_tokens(first_sentences(u.description, words)) + LINE_TOKENS
        if kept and used + cost > budget:
            continue
        kept.append(u)
        used += cost
    return sorted(kept, key=lambda u: u.index)


def episode_block(number: int, units: Sequence[Unit], people: Sequence[str], language: str) -> str:
    """One numbered episode of a request: its most telling units (see `telling_units`), and how
    many less telling ones were left out."""
    span = span_label(min(u.ordinal for u in units), max(u.ordinal for u in units), language)
    cast = ", ".join(people[:MAX_PARTICIPANTS]) or "-"
    head = f"{number}. {span}" + (f"；参与者：{cast}" if language == "zh" else f"; participants: {cast}")
    shown = telling_units(units, language)
    words = UNIT_WORDS["zh" if language == "zh" else "en"]
    told = {first_sentences(u.description, words).casefold() for u in shown}
    every = {first_sentences(u.description, words).casefold() for u in units if u.description.strip()}
    left = len(every - told)
    note = f"（另有{left}个次要单元未列出）" if language == "zh" else f"({left} less telling units left out)"
    return "\n".join([head, *(unit_lines(shown, language) or ["-"]), *([note] if left > 0 else [])])


def group_blocks(blocks: dict[str, str], pack_tokens: int, max_per_request: int) -> list[list[str]]:
    """Consecutive episodes grouped while their blocks fit `pack_tokens`, with content-defined
    boundaries keyed by each episode's section span (tasks.llm.requests.request_groups): an edited episode
    re-asks its own group, not every later one."""
    costs = {e: count_tokens(b) for e, b in blocks.items()}
    items = ((e, span_key(b), (e,)) for e, b in blocks.items())
    return stable_groups(items, costs, pack_tokens, max_per_request)


def span_key(block: str) -> str:
    """A block's section span: its head line without the participants (they change with an edit
    of the episode's own text, and its span seldom does)."""
    return re.split(r"[;；]", block.split("\n", 1)[0], maxsplit=1)[0]


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
        SHAPES["assemble_episodes"],
        groups,
        lambda group: {
            "document_title": doc.title,
            "episodes": "\n\n".join(renumbered(blocks[e], n) for n, e in enumerate(group, 1)),
        },
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
