"""Episode assembly (paper §3.2, appendix A.1): group a document's events, interactions and
occasions into coherent episodes, one row per episode.

Units are visited in source order; each joins the recent open episode with the highest
coherence φ(u, z) at or above `min_coherence`, or opens a new episode. φ mixes shared
participants, shared goal/conflict stakes, shared occasion or place, temporal continuity
(section gap), causal dependency, semantic similarity and source adjacency. A unit is scored
against at most `max_open_episodes` episodes, so assembly is linear in the number of units.
Titles and summaries come from the LLM when one is configured, else they are composed from
the units.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from schemas.config import AssembleEpisodesSettings
from schemas.ids import make_id
from tasks.hierarchy.episode_llm import describe_episodes
from tasks.hierarchy.episode_text import compose_text
from tasks.hierarchy.unit_vectors import unit_vectors
from tasks.hierarchy.units import (
    CHARACTER_TYPES,
    STAKE_TYPES,
    Unit,
    as_text,
    conflict_pair,
    entity_names,
    entity_types,
    has_cue,
    load_units,
)
from tasks.index.grounded_vectors import SentenceVectors
from tasks.stage import StageContext, StageOutput

WEIGHTS = {
    "participants": 0.30,
    "goal_conflict": 0.15,
    "occasion": 0.10,
    "temporal": 0.15,
    "causal": 0.10,
    "semantic": 0.10,
    "adjacency": 0.10,
}


@dataclass
class Draft:
    """An episode being assembled."""

    units: list[Unit] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)  # coherence of each join after the first unit
    people: Counter = field(default_factory=Counter)
    stakes: set[str] = field(default_factory=set)
    occasions: set[str] = field(default_factory=set)
    places: set[str] = field(default_factory=set)
    events: set[str] = field(default_factory=set)
    conflict_pairs: set[frozenset[str]] = field(default_factory=set)
    sections: set[str] = field(default_factory=set)
    vector: np.ndarray | None = None


@dataclass(frozen=True)
class Signals:
    """Per-document lookups the coherence function needs."""

    types: dict[str, str]
    idf: dict[str, float]
    location: dict[str, str]  # section_id -> place key from the scene heading
    vectors: np.ndarray | None  # one L2-normalised row per unit (by Unit.index), or None
    max_gap: int


def _people(unit: Unit, types: dict[str, str]) -> list[str]:
    return [p for p in unit.participants if types.get(p) in CHARACTER_TYPES]


def _stakes(unit: Unit, types: dict[str, str]) -> set[str]:
    return {p for p in unit.participants if types.get(p) in STAKE_TYPES}


def _places(unit: Unit, signals: Signals) -> set[str]:
    places = {p for p in unit.participants if signals.types.get(p) == "location"}
    if unit.setting_id:
        places.add(unit.setting_id)
    if signals.location.get(unit.section_id):
        places.add(signals.location[unit.section_id])
    return places


def coherence(unit: Unit, draft: Draft, signals: Signals) -> tuple[float, dict[str, float]]:
    """φ(u, z) in [0, 1] and its components, for a unit that comes after every unit of the draft."""
    last = draft.units[-1]
    people = _people(unit, signals.types)
    total = sum(signals.idf.get(p, 1.0) for p in people)
    shared = sum(signals.idf.get(p, 1.0) for p in people if p in draft.people)
    f_people = shared / total if total else 0.0
    stakes = _stakes(unit, signals.types)
    f_goal = len(stakes & draft.stakes) / len(stakes) if stakes else 0.0
    pair = conflict_pair(unit)
    if pair is not None and pair in draft.conflict_pairs:
        f_goal = 1.0
    if set(unit.occasion_ids) & draft.occasions:
        f_occasion = 1.0
    else:
        f_occasion = 0.6 if _places(unit, signals) & draft.places else 0.0
    gap = unit.ordinal - last.ordinal
    f_temporal = 1.0 if gap <= 0 else max(0.0, 1.0 - gap / (signals.max_gap + 1))
    if gap > 0:
        # Crossing into another section is continuity only while the episode is still short: shared
        # people alone (a protagonist in every scene) must not chain a whole act into one episode.
        f_temporal /= len(draft.sections)
        f_people /= math.sqrt(len(draft.sections))
    if unit.event_id and unit.event_id in draft.events:
        f_causal = 1.0  # an explicit unit link: the interaction is part of an event already here
    elif has_cue(unit.description, "causal") and (shared or stakes & draft.stakes):
        f_causal = 0.6
    else:
        f_causal = 0.0
    f_semantic = 0.0
    if signals.vectors is not None and draft.vector is not None:
        norm = float(np.linalg.norm(draft.vector))
        if norm > 0:
            f_semantic = max(0.0, float(signals.vectors[unit.index] @ draft.vector) / norm)
    f_adjacent = 1.0 if last.index == unit.index - 1 else 0.5 if last.index >= unit.index - 3 else 0.0
    parts = {
        "participants": f_people,
        "goal_conflict": f_goal,
        "occasion": f_occasion,
        "temporal": f_temporal,
        "causal": f_causal,
        "semantic": f_semantic,
        "adjacency": f_adjacent,
    }
    return sum(WEIGHTS[k] * v for k, v in parts.items()), parts


def is_background(unit: Unit) -> bool:
    """An occasion over several sections (a recurring setting, an institution): context, not cast."""
    return unit.kind == "occasion" and len(unit.section_ids) > 1


def _add(draft: Draft, unit: Unit, signals: Signals, score: float | None) -> None:
    draft.units.append(unit)
    if score is not None:
        draft.scores.append(score)
    if not is_background(unit):
        # Everyone ever seen in a recurring setting would otherwise become this episode's cast.
        draft.people.update(_people(unit, signals.types))
        draft.stakes |= _stakes(unit, signals.types)
    draft.occasions |= set(unit.occasion_ids)
    draft.sections.add(unit.section_id)
    draft.places |= _places(unit, signals)
    if unit.kind == "event":
        draft.events.add(unit.unit_id)
    pair = conflict_pair(unit)
    if pair is not None:
        draft.conflict_pairs.add(pair)
    if signals.vectors is not None:
        row = signals.vectors[unit.index]
        draft.vector = row.copy() if draft.vector is None else draft.vector + row


def participant_idf(units: list[Unit]) -> dict[str, float]:
    """Inverse unit frequency of each participant: a protagonist everywhere links little."""
    df = Counter(p for u in units for p in set(u.participants))
    n = max(1, len(units))
    return {p: math.log(1.0 + n / c) for p, c in df.items()}


def assemble(units: list[Unit], signals: Signals, settings: AssembleEpisodesSettings) -> list[Draft]:
    """Greedy, source-ordered clustering of units into episodes (in order of their first unit).

    Background occasions (spanning several sections) are attached afterwards to the episode of
    their first section that shares most of their participants: as context they belong to an
    episode, but they must neither open one nor decide what joins it.
    """
    drafts: list[Draft] = []
    recent: list[int] = []  # draft indexes, least recently extended first; at most max_open_episodes
    for unit in units:
        if is_background(unit):
            continue
        best: tuple[float, int] | None = None
        for i in recent:
            draft = drafts[i]
            if (
                len(draft.units) >= settings.max_units_per_episode
                or unit.ordinal - draft.units[-1].ordinal > signals.max_gap
            ):
                continue
            score, _ = coherence(unit, draft, signals)
            # Ties go to the most recently extended episode (later in `recent`).
            if score >= settings.min_coherence and (best is None or score >= best[0]):
                best = (score, i)
        if best is None:
            drafts.append(Draft())
            target, score = len(drafts) - 1, None
        else:
            target, score = best[1], best[0]
        _add(drafts[target], unit, signals, score)
        if target in recent:
            recent.remove(target)
        recent.append(target)
        del recent[: max(0, len(recent) - settings.max_open_episodes)]
    in_section: dict[str, list[int]] = {}
    for i, draft in enumerate(drafts):
        for section in dict.fromkeys(u.section_id for u in draft.units):
            in_section.setdefault(section, []).append(i)
    for unit in (u for u in units if is_background(u)):
        people = set(unit.participants)
        host = None
        for section in unit.section_ids:  # its first section first; a later one when those episodes are full
            hosts = [
                i
                for i in in_section.get(section, [])
                if len(drafts[i].units) < settings.max_units_per_episode
            ]
            if hosts:
                host = max(
                    hosts,
                    key=lambda i: (
                        len(people & set(drafts[i].people)),
                        sum(u.section_id == section for u in drafts[i].units),
                        -i,
                    ),
                )
                # Re-anchored where it joins, so it never stretches the host episode's span.
                ordinal = next(u.ordinal for u in drafts[host].units if u.section_id == section)
                unit = replace(unit, section_id=section, ordinal=ordinal)
                break
        if host is not None:
            _add(drafts[host], unit, signals, None)
            drafts[host].units.sort(key=lambda u: u.index)
        else:
            drafts.append(Draft())
            _add(drafts[-1], unit, signals, None)
    return _absorb_empty_scenes(drafts, units, signals, settings)


def _absorb_empty_scenes(
    drafts: list[Draft], units: list[Unit], signals: Signals, settings: AssembleEpisodesSettings
) -> list[Draft]:
    """Fold episodes made only of participant-less occasions (an establishing shot, a scene where
    nothing was extracted) into the episode that follows them, else the one before."""
    owner = {u.index: i for i, d in enumerate(drafts) for u in d.units}
    # Neighbours in story order among local units (background occasions were placed elsewhere).
    local = [u for u in units if not is_background(u)]
    position = {u.index: p for p, u in enumerate(local)}
    for i in reversed(range(len(drafts))):
        draft = drafts[i]
        if any(u.kind != "occasion" or u.participants or is_background(u) for u in draft.units):
            continue
        first, last = draft.units[0], draft.units[-1]
        for p, anchor in ((position[last.index] + 1, last), (position[first.index] - 1, first)):
            if not 0 <= p < len(local):
                continue
            other = local[p]
            j = owner[other.index]
            if j == i or len(drafts[j].units) + len(draft.units) > settings.max_units_per_episode:
                continue
            if abs(other.ordinal - anchor.ordinal) > signals.max_gap:
                continue
            for u in draft.units:
                _add(drafts[j], u, signals, None)
                owner[u.index] = j
            drafts[j].units.sort(key=lambda u: u.index)
            draft.units.clear()
            break
    return [d for d in drafts if d.units]


def story_key(draft: Draft) -> tuple[int, int]:
    """Episodes are ordered by their earliest section, then by their first unit there."""
    first = min(u.ordinal for u in draft.units)
    return first, min(u.index for u in draft.units if u.ordinal == first)


def episode_rows(
    doc_id: str,
    drafts: list[Draft],
    sections: pd.DataFrame,
    texts: dict[str, dict[str, str]],
    methods: dict[str, str],
) -> list[dict[str, Any]]:
    """One `episodes` row per draft, ordered by first section then first unit; texts by episode id."""
    ordinal = {str(r.section_id): int(r.ordinal) for r in sections.itertuples()}
    rows = []
    for number, draft in enumerate(sorted(drafts, key=story_key), start=1):
        unit_ids = [u.unit_id for u in draft.units]
        episode_id = make_id("epi", doc_id, unit_ids)
        # An occasion counts only where it is anchored: a background spanning the whole document must
        # not stretch the episode that happens to hold it.
        spans = sorted({u.section_id for u in draft.units}, key=lambda s: (ordinal[s], s))
        cast = [u for u in draft.units if not is_background(u)] or draft.units
        seen: dict[str, int] = {}
        for u in cast:
            for p in u.participants:
                seen.setdefault(p, u.index)
        counts = Counter(p for u in cast for p in u.participants)
        participants = sorted(counts, key=lambda p: (-counts[p], seen[p], p))
        text = texts[episode_id]
        rows.append(
            {
                "episode_id": episode_id,
                "doc_id": doc_id,
                "ordinal": number,
                "title": text["title"],
                "summary": text["summary"],
                "goal": text["goal"],
                "participant_ids": participants,
                "unit_ids": unit_ids,
                "section_ids": spans,
                "first_ordinal": ordinal[spans[0]],
                "last_ordinal": ordinal[spans[-1]],
                "coherence": round(sum(draft.scores) / len(draft.scores), 4) if draft.scores else None,
                "method": methods[episode_id],
            }
        )
    return rows


def run(ctx: StageContext) -> StageOutput:
    doc = ctx.document
    settings = ctx.settings.assemble_episodes
    sections, entities = ctx.table("sections"), ctx.table("entities")
    units = load_units(
        sections, entities, ctx.table("events"), ctx.table("interactions"), ctx.table("occasions")
    )
    types, names = entity_types(entities), entity_names(entities)
    vectors = None
    if ctx.embedder is not None and units:
        sentences = SentenceVectors.from_tables(ctx.tables, ctx.embedder.name)
        vectors = unit_vectors(units, sentences, ctx.embedder, settings.unit_vectors == "derived")
    location = {
        str(r.section_id): f"loc:{as_text(r.location).lower()}"
        for r in sections.itertuples()
        if as_text(r.location)
    }
    signals = Signals(
        types=types,
        idf=participant_idf(units),
        location=location,
        vectors=vectors,
        max_gap=0 if settings.scene_bounded and doc.kind == "screenplay" else settings.max_section_gap,
    )
    drafts = assemble(units, signals, settings)
    ordered = sorted(drafts, key=story_key)
    ids = [make_id("epi", doc.doc_id, [u.unit_id for u in d.units]) for d in ordered]
    texts = {
        eid: compose_text(d.units, d.people, names, doc.language, n)
        for n, (eid, d) in enumerate(zip(ids, ordered), start=1)
    }
    methods = dict.fromkeys(ids, "heuristic")
    output: StageOutput = {}
    if ctx.llm is not None and ordered:
        output.update(describe_episodes(ctx, dict(zip(ids, ordered)), names, texts, methods))
    output["episodes"] = episode_rows(doc.doc_id, drafts, sections, texts, methods)
    return output
