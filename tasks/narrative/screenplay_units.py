"""Offline narrative units from the structure of a screenplay: events from action sentences,
interactions from dialogue turns (speaker -> addressee by parenthetical, vocative or turn
alternation, rules in `dialogue`) and from transitive action sentences, one occasion per scene,
and situation occasions for recurring settings and institutions. Prose goes to `narrative_prose`."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from tasks.ingest.screenplay import Block, parse_blocks
from tasks.narrative.cues import event_type, line_type, time_cue, transitive_type
from tasks.narrative.dialogue import (
    SceneState,
    alternation_addressees,
    interaction_description,
    parenthetical_addressees,
    resolve_speaker,
    vocative_addressees,
)
from tasks.narrative.inputs import (
    AGENT_TYPES,
    NON_PARTICIPANT_TYPES,
    NarrativeInputs,
    event_row,
    interaction_row,
    join_names,
    occasion_row,
)
from tasks.tables.io import as_list

METHOD = "heuristic"
MIN_EVENT_WORDS = 3
MIN_EVENT_CHARS_ZH = 2


def screenplay_units(inputs: NarrativeInputs, max_events_per_chunk: int) -> dict[str, list[dict[str, Any]]]:
    """Events, interactions and occasions of a screenplay document, scene by scene."""
    events: list[dict[str, Any]] = []
    interactions: list[dict[str, Any]] = []
    occasions: list[dict[str, Any]] = []
    per_chunk: Counter = Counter()
    for section in inputs.sections.to_dict("records"):
        setting = inputs.setting_for(section) if section["section_kind"] == "scene" else None
        blocks = parse_blocks(
            inputs.text, int(section["char_start"]), int(section["char_end"]), inputs.language
        )
        state = SceneState()
        scene_events, scene_interactions = _scene(
            inputs, section, blocks, setting, state, per_chunk, max_events_per_chunk
        )
        if section["section_kind"] != "scene" and not state.present:
            continue
        occasion = scene_occasion(inputs, section, setting, state)
        for row in scene_interactions:
            row["occasion_id"] = occasion["occasion_id"]
        occasions.append(occasion)
        events.extend(scene_events)
        interactions.extend(scene_interactions)
    occasions.extend(situation_occasions(inputs, occasions))
    return {"events": events, "interactions": interactions, "occasions": occasions}


def _scene(
    inputs: NarrativeInputs,
    section: dict[str, Any],
    blocks: list[Block],
    setting: str | None,
    state: SceneState,
    per_chunk: Counter,
    max_events: int,
) -> tuple[list[dict], list[dict]]:
    events: list[dict[str, Any]] = []
    interactions: list[dict[str, Any]] = []
    records = inputs.section_sentences(section)
    starts = [record["char_start"] for record in records]
    turn: list[Block] = []
    for block in blocks + [Block("heading", len(inputs.text), len(inputs.text))]:
        if block.kind in ("dialogue", "parenthetical") and turn:
            turn.append(block)
            continue
        if turn:
            row = _dialogue_turn(inputs, turn, state)
            if row is not None:
                interactions.append(row)
            turn = []
        if block.kind == "cue":
            turn = [block]
        elif block.kind == "action":
            for sentence in [records[i] for i in _between(starts, block.start, block.end)]:
                made = _action_sentence(inputs, sentence, section, setting, state, per_chunk, max_events)
                events.extend(made[0])
                interactions.extend(made[1])
    return events, interactions


def _between(starts: list[int], start: int, end: int) -> list[int]:
    return [i for i, s in enumerate(starts) if start <= s < end]


def _action_sentence(
    inputs: NarrativeInputs,
    sentence: dict[str, Any],
    section: dict[str, Any],
    setting: str | None,
    state: SceneState,
    per_chunk: Counter,
    max_events: int,
) -> tuple[list[dict], list[dict]]:
    start, end = int(sentence["char_start"]), int(sentence["char_end"])
    hits = inputs.entities_in(start, end)
    for agent in inputs.of_types(hits, frozenset({"character"})):
        state.present[agent] += 1
    if per_chunk[sentence["chunk_id"]] >= max_events:
        return [], []
    made = sentence_units(inputs, start, end, str(sentence["text"]), hits, section, setting)
    per_chunk[sentence["chunk_id"]] += len(made[0])
    for event in made[0]:
        if event["event_type"] == "departure":
            state.gone.update(event["participant_ids"])
        elif event["event_type"] == "arrival":
            state.gone.difference_update(event["participant_ids"])
    return made


def sentence_units(
    inputs: NarrativeInputs,
    start: int,
    end: int,
    text: str,
    hits: list[tuple[int, str]],
    section: dict[str, Any],
    setting: str | None,
    subject: str | None = None,
) -> tuple[list[dict], list[dict]]:
    """The event of one narrated sentence with a character in it (or an implied `subject`), and the
    interaction when a transitive verb links two characters."""
    agents = inputs.of_types(hits, AGENT_TYPES)
    characters = [e for e in agents if inputs.lexicon.types.get(e) in ("character", "group")]
    if subject is not None and subject not in characters:
        characters.insert(0, subject)
        agents.insert(0, subject)
        hits = [(start, subject)] + hits
    if not characters or not _has_predicate(text, inputs):
        return [], []
    first = next(p for p, e in hits if e == characters[0]) - start
    participants = [e for e in [subject] + inputs.of_types(hits, NON_PARTICIPANT_TYPES, exclude=True) if e]
    place = inputs.of_types(hits, frozenset({"location"}))
    event = event_row(
        inputs,
        start,
        end,
        text,
        event_type(text, inputs.language, after=max(0, first)),
        participants,
        setting or (place[0] if place else None),
        time_cue(text, inputs.language, section.get("time_of_day")),
        text,
        METHOD,
    )
    action = transitive_type(text, inputs.language)
    if action is None or len(agents) < 2:
        return [event], []
    kind, verb_start, verb_end = action
    before = [e for p, e in hits if p - start < verb_start and e in agents]
    after = [e for p, e in hits if p - start >= verb_end and e in agents]
    actor = before[-1] if before else None
    objects = [e for e in after if e != actor]
    if actor is None or not objects:
        return [event], []
    row = interaction_row(
        inputs, start, end, actor, objects, kind, text, event["event_id"], None, False, text, METHOD
    )
    return [event], [row]


def _has_predicate(text: str, inputs: NarrativeInputs) -> bool:
    """Enough words besides the names to describe something happening."""
    residue = text
    for match in inputs.lexicon.find_mentions(text):
        residue = residue.replace(match.surface, " ")
    if inputs.language == "zh":
        return len(re.sub(r"[\W\d]", "", residue)) >= MIN_EVENT_CHARS_ZH
    return len(re.findall(r"[a-z][a-z'’]+", residue)) >= MIN_EVENT_WORDS


def _dialogue_turn(inputs: NarrativeInputs, turn: list[Block], state: SceneState) -> dict[str, Any] | None:
    cue, lines = turn[0], [b for b in turn[1:] if b.kind == "dialogue"]
    if not lines:
        return None
    speaker = resolve_speaker(inputs, cue)
    if speaker is None:
        return None
    state.present[speaker] += 1
    state.gone.discard(speaker)
    start, end = lines[0].start, lines[-1].end
    line = " ".join(inputs.text[b.start : b.end] for b in lines)
    addressees, to_self = parenthetical_addressees(
        inputs, [b for b in turn if b.kind == "parenthetical"], speaker
    )
    if not addressees and not to_self:
        addressees = vocative_addressees(inputs, lines, speaker)
    if not addressees and not to_self:
        addressees = alternation_addressees(state, speaker)
    answered = bool(
        state.last_turn
        and state.last_turn[2] == "ask"
        and state.last_turn[0] in addressees
        and speaker in state.last_turn[1]
    )
    kind = line_type(line, inputs.language, answers_question=answered)
    if speaker not in state.speakers[-1:]:
        state.speakers.append(speaker)
    state.last_turn = (speaker, addressees, kind)
    if not addressees:
        return None
    names = [inputs.lexicon.name(a) for a in addressees]
    description = interaction_description(
        inputs.lexicon.name(speaker), names, kind, " ".join(line.split()), inputs.language
    )
    return interaction_row(
        inputs, start, end, speaker, addressees, kind, description, None, None, True, line, METHOD
    )


def scene_occasion(
    inputs: NarrativeInputs, section: dict[str, Any], setting: str | None, state: SceneState
) -> dict[str, Any]:
    """The scene as an occasion: heading context and the characters present, linked to the setting."""
    participants = [e for e, _ in sorted(state.present.items(), key=lambda kv: (-kv[1], kv[0]))]
    names = [inputs.lexicon.name(e) for e in participants[:8]]
    place = (
        inputs.lexicon.name(setting) if setting else (section.get("location") or section.get("heading") or "")
    )
    when = (section.get("time_of_day") or "").lower()
    if inputs.language == "zh":
        context = f"{place}（{section.get('time_of_day') or ''}）".replace("（）", "")
        description = f"场景：{context}" + (f"，{join_names(names, 'zh')}在场。" if names else "。")
    else:
        context = f"{place.title() if place.isupper() else place}" + (f", {when}" if when else "")
        description = f"Scene at {context}" + (f", with {join_names(names, 'en')}." if names else ".")
    return occasion_row(
        inputs,
        description,
        "scene",
        participants,
        setting,
        [section["section_id"]],
        inputs.section_chunk_ids(section["section_id"]),
        METHOD,
        key="scene",
    )


def situation_occasions(
    inputs: NarrativeInputs, scene_occasions: list[dict[str, Any]], min_sections: int = 2
) -> list[dict[str, Any]]:
    """Recurring settings (a location used by several scenes) and institutions named in several sections."""
    rows: list[dict[str, Any]] = []
    by_setting: dict[str, list[dict[str, Any]]] = {}
    for occasion in scene_occasions:
        if occasion["setting_id"]:
            by_setting.setdefault(occasion["setting_id"], []).append(occasion)
    for setting, group in sorted(by_setting.items()):
        if len(group) < min_sections:
            continue
        present = Counter(e for o in group for e in o["participant_ids"])
        participants = [e for e, _ in sorted(present.items(), key=lambda kv: (-kv[1], kv[0]))][:8]
        name = inputs.lexicon.name(setting)
        description = (
            f"反复出现的场所：{name}（{len(group)}场）"
            if inputs.language == "zh"
            else f"Recurring setting: {name} ({len(group)} scenes)"
        )
        rows.append(
            occasion_row(
                inputs,
                description,
                "situation",
                participants,
                setting,
                [s for o in group for s in o["section_ids"]],
                [c for o in group for c in o["chunk_ids"]],
                METHOD,
                key=f"setting:{setting}",
            )
        )
    rows.extend(_institution_occasions(inputs, min_sections))
    return rows


def _institution_occasions(inputs: NarrativeInputs, min_sections: int) -> list[dict[str, Any]]:
    institutions = inputs.entities[inputs.entities["entity_type"] == "institution"]
    rows: list[dict[str, Any]] = []
    for entity in institutions.sort_values("entity_id").to_dict("records"):
        section_ids = as_list(entity.get("section_ids"))
        if len(section_ids) < min_sections:
            continue
        co_present = Counter()
        for sentence in inputs.sentences[inputs.sentences["section_id"].isin(section_ids)].to_dict("records"):
            hits = inputs.entities_in(int(sentence["char_start"]), int(sentence["char_end"]))
            if any(e == entity["entity_id"] for _, e in hits):
                co_present.update(e for e in inputs.of_types(hits, frozenset({"character"})))
        participants = [e for e, _ in sorted(co_present.items(), key=lambda kv: (-kv[1], kv[0]))][:8]
        description = (
            f"机构背景：{entity['name']}在{len(section_ids)}个段落中起作用"
            if inputs.language == "zh"
            else f"Institutional context: {entity['name']} bears on {len(section_ids)} sections"
        )
        rows.append(
            occasion_row(
                inputs,
                description,
                "institution",
                participants,
                None,
                section_ids,
                as_list(entity.get("chunk_ids")),
                METHOD,
                key=f"institution:{entity['entity_id']}",
            )
        )
    return rows
