"""Offline text of an assembled episode: a title, a summary and its central goal or conflict,
composed from the episode's own units (the LLM writes them when one is configured)."""

from __future__ import annotations

import re
from collections import Counter

from tasks.hierarchy.text import join_names, join_sentences, shorten
from tasks.hierarchy.units import CONFLICT_INTERACTIONS, Unit, conflict_pair, has_cue

SCREENPLAY_INTRODUCTION = re.compile(r"^[A-Z][A-Z .'’-]+ \(")
# How much a unit tells about its episode, for titles and summaries: turning points first.
SALIENCE = {
    "decision": 3.0,
    "discovery": 3.0,
    "state_change": 2.5,
    "arrival": 2.0,
    "departure": 2.0,
    "action": 1.5,
    "communication": 1.0,
    "other": 1.0,
}


def salience(unit: Unit) -> float:
    """How much a unit tells about its episode (turning points high, scene frames low)."""
    if unit.kind == "event":
        base = SALIENCE.get(unit.unit_type, 1.0)
    elif unit.kind == "interaction":
        base = 2.5 if unit.unit_type in CONFLICT_INTERACTIONS else 1.0
    else:
        base = 0.5
    if SCREENPLAY_INTRODUCTION.match(unit.description):
        base -= 1.0  # "MARGARET HALE (60s), the keeper, ..." introduces a character, no plot
    return base + 0.1 * min(len(unit.participants), 5) + (0.0 if unit.description else -10.0)


def compose_text(
    units: list[Unit], people: Counter, names: dict[str, str], language: str, number: int
) -> dict[str, str]:
    """Offline title, summary and goal of one episode, composed from its units."""
    leads = [names.get(p, p) for p, _ in sorted(people.items(), key=lambda kv: (-kv[1], kv[0]))][:2]
    ranked = sorted(units, key=lambda u: (-salience(u), u.index))
    head = shorten(ranked[0].description, 80) if ranked[0].description else ""
    if not head:
        head = f"第{number}段情节" if language == "zh" else f"Episode {number}"
    title = f"{join_names(leads, language)}{'：' if language == 'zh' else ': '}{head}" if leads else head
    # Scene and setting descriptions frame the story but do not tell it: summarise the action.
    told = [u for u in ranked if u.kind != "occasion"] or ranked
    chosen = sorted(told[:8], key=lambda u: u.index)
    summary = join_sentences((u.description for u in chosen), language, 900) or head
    if any(has_cue(u.time_cue, "flashback") for u in units):
        # Story time is what relation prediction orders by: say so where it will read it.
        summary = ("闪回：" if language == "zh" else "Flashback: ") + summary
    goal_unit = next((u for u in units if has_cue(u.description, "goal")), None) or next(
        (u for u in units if conflict_pair(u) is not None or has_cue(u.description, "conflict")), None
    )
    goal = shorten(goal_unit.description, 300) if goal_unit else ""
    return {"title": shorten(title, 150), "summary": summary, "goal": goal}
