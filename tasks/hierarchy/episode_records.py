"""Episodes as the later hierarchy requests show them (relate_episodes, break_cycles,
induce_storylines): one line per episode with its section span, the first sentences of its
summary (the title only when there is no summary), its goal or conflict when it has one and its
first participants; each episode of a request is written once, under a label."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tasks.hierarchy.text import span_label
from tasks.hierarchy.units import as_text, string_list
from tasks.llm.requests.records import first_sentences

SUMMARY_WORDS = {"en": 40, "zh": 80}
GOAL_WORDS = {"en": 16, "zh": 32}
MAX_PARTICIPANTS = 5


def episode_line(
    r: Any,
    names: Mapping[str, str],
    language: str,
    summary_words: int | None = None,
    participants: bool = True,
) -> str:
    """`(sections 3–5) <summary> | goal: <goal> | with: A, B` for an `episodes` row (zh: `（第3–5节）…`)."""
    zh = language == "zh"
    key = "zh" if zh else "en"
    span = span_label(int(r.first_ordinal), int(r.last_ordinal), language)
    words = summary_words or SUMMARY_WORDS[key]
    text = first_sentences(as_text(r.summary), words) or first_sentences(as_text(r.title), words) or "-"
    parts = [f"（{span}）{text}" if zh else f"({span}) {text}"]
    goal = first_sentences(as_text(r.goal), GOAL_WORDS[key])
    if goal:
        parts.append(f"目标：{goal}" if zh else f"goal: {goal}")
    people = [names.get(p, p) for p in string_list(r.participant_ids)[:MAX_PARTICIPANTS]]
    if participants and people:
        parts.append(("人物：" if zh else "with: ") + ", ".join(people))
    return " | ".join(parts)
