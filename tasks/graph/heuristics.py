"""The offline graph extractor: entities from the text's own structure, grounded as mention
spans over the chunks, and relations from sentences, dialogue turns and scene settings.

One pure entry point, `extract_heuristic`, for screenplays (English and Chinese) and prose;
`offline_characters` is the part of that reading the LLM extraction needs (its known names).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from tasks.graph.name_lexicon import ANY, CAPS, PROPER, Lexicon
from tasks.graph.names import display_name, normalize_name
from tasks.graph.prose import attribution_turns, read_prose
from tasks.graph.relations import (
    Mention,
    MentionIndex,
    exchange_relations,
    sentence_relations,
    setting_relations,
    snippet,
)
from tasks.graph.screenplay import (
    COLLECTIVE_EN,
    TITLED_NAME,
    WEEKDAY_TIME,
    ScreenplayLexicon,
    add_heading_entities,
    find_full_names,
    find_vocatives,
    read_speakers,
    scan_action,
    written_as_proper,
)
from tasks.graph.upsert import ChunkIndex, EntityKey, GraphDraft, claim_spans
from tasks.graph.zh import COLLECTIVE_ZH, familiar_names, given_names, resolve_speakers
from tasks.ingest.screenplay import parse_blocks


@dataclass
class Plan:
    """What a reader of one document found, ready for grounding and relations."""

    lexicon: Lexicon
    spans: list[tuple[int, int, EntityKey]] = field(default_factory=list)  # fixed spans (cues, headings)
    speaker_keys: dict[str, EntityKey] = field(default_factory=dict)  # raw speaker string -> entity
    turns: list[tuple[str, EntityKey, int, int]] = field(
        default_factory=list
    )  # (section, speaker, start, end)
    section_locations: dict[str, EntityKey] = field(default_factory=dict)
    headings: dict[str, str] = field(default_factory=dict)
    links: list[tuple[EntityKey, EntityKey, str, list[str], int]] = field(
        default_factory=list
    )  # extra relations


def _read(
    doc_id: str,
    text: str,
    language: str,
    kind: str,
    title: str,
    sections: pd.DataFrame,
    chunks: pd.DataFrame,
    sentences: pd.DataFrame,
    min_prose_name_count: int,
) -> tuple[GraphDraft, Plan, MentionIndex, ChunkIndex]:
    """The document's entities, found by the reader of its kind and grounded over the chunks."""
    index = ChunkIndex(chunks)
    draft = GraphDraft(doc_id, text, index)
    ordered = sections.sort_values("ordinal")
    if kind == "screenplay" and language == "zh":
        plan = _plan_zh_screenplay(draft, text, ordered)
    elif kind == "screenplay":
        plan = _plan_en_screenplay(draft, text, title, ordered, sentences)
    else:
        plan = _plan_prose(draft, text, sentences, min_prose_name_count, language)
    return draft, plan, _ground(draft, plan, index, chunks), index


def extract_heuristic(
    doc_id: str,
    text: str,
    language: str,
    kind: str,
    title: str,
    sections: pd.DataFrame,
    chunks: pd.DataFrame,
    sentences: pd.DataFrame,
    min_prose_name_count: int,
    max_description_chars: int,
) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    """raw_entities / raw_mentions / raw_relations rows of one document, and warnings."""
    draft, plan, mentions, index = _read(
        doc_id, text, language, kind, title, sections, chunks, sentences, min_prose_name_count
    )
    _describe_actors(draft, sentences, mentions, set(sections["char_start"].astype(int)))
    names = {key: _display(draft, key) for key in draft.entities}
    sentence_relations(draft, sentences, mentions, plan.speaker_keys, names, language)
    exchange_relations(draft, plan.turns, names, index, language)
    setting_relations(draft, mentions, index, plan.section_locations, plan.headings, names, language)
    for a, b, description, keywords, position in plan.links:
        chunk = index.locate(position, position + 1)
        if chunk is not None:
            draft.add_relation(a, b, description, keywords, [chunk.chunk_id], method="heuristic:introduction")
    grounded = {m.key for m in mentions.items}
    draft.prune(grounded)  # an entity the text never grounds is not kept
    warnings = (
        [f"{draft.rejected_mentions} mention span(s) crossed a chunk boundary and were dropped"]
        if draft.rejected_mentions
        else []
    )
    return draft.to_rows(max_description_chars), warnings


def offline_characters(
    doc_id: str,
    text: str,
    language: str,
    kind: str,
    title: str,
    sections: pd.DataFrame,
    chunks: pd.DataFrame,
    sentences: pd.DataFrame,
    min_prose_name_count: int,
) -> list[dict[str, Any]]:
    """The characters `extract_heuristic` writes (name, entity_type, n_mentions as in its
    raw_entities rows), without the relations, descriptions and rows the LLM path does not use."""
    draft, _, mentions, _ = _read(
        doc_id, text, language, kind, title, sections, chunks, sentences, min_prose_name_count
    )
    grounded = {m.key for m in mentions.items}
    counts = Counter(key for key, _, _ in draft.mentions)
    return [
        {"name": _display(draft, key), "entity_type": key[0], "n_mentions": counts[key]}
        for key in draft.entities
        if key in grounded and key[0] == "character"
    ]


def _display(draft: GraphDraft, key: EntityKey) -> str:
    names = draft.entities[key].names
    return sorted(names.items(), key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0][0]


def _describe_actors(
    draft: GraphDraft,
    sentences: pd.DataFrame,
    mentions: MentionIndex,
    heading_starts: set[int],
    per_entity: int = 2,
) -> None:
    """A character is described by the first narration sentences it opens ("John watches ...")."""
    used: Counter = Counter()
    narration = sentences[sentences["speaker"].isna()].sort_values("char_start")
    for row in narration.itertuples():
        start = int(row.char_start)
        if start in heading_starts:
            continue
        opening = mentions.within(start, int(row.char_end))
        if not opening or opening[0].start != start:
            continue
        key = opening[0].key
        if key[0] in ("character", "group") and used[key] < per_entity:
            used[key] += 1
            draft.describe(key, snippet(row.text, 200))


def _ground(draft: GraphDraft, plan: Plan, index: ChunkIndex, chunks: pd.DataFrame) -> MentionIndex:
    """Every lexicon match and fixed span inside a chunk becomes a mention (longest span wins)."""
    fixed: dict[str, list[tuple[int, int, EntityKey]]] = {}
    for start, end, key in plan.spans:
        chunk = index.locate(start, end)
        if chunk is not None:
            fixed.setdefault(chunk.chunk_id, []).append((start, end, key))
    found: list[Mention] = []
    for chunk in chunks.itertuples():
        candidates = fixed.get(chunk.chunk_id, []) + plan.lexicon.find_spans(
            chunk.text, int(chunk.char_start)
        )
        for start, end, key in claim_spans(candidates):
            if key in draft.entities and draft.add_mention(key, start, end):
                found.append(Mention(start, end, key))
    return MentionIndex(found)


# -- English screenplays ---------------------------------------------------------------


def _plan_en_screenplay(
    draft: GraphDraft, text: str, title: str, sections: pd.DataFrame, sentences: pd.DataFrame
) -> Plan:
    plan = Plan(Lexicon("en"))
    lexicon = ScreenplayLexicon()
    blocks_by_section = {
        s.section_id: parse_blocks(text, int(s.char_start), int(s.char_end), "en")
        for s in sections.itertuples()
    }
    cue_of: dict[int, str] = {}
    preamble = {
        b.start
        for s in sections.itertuples()
        if s.section_kind == "preamble"
        for b in blocks_by_section[s.section_id]
    }  # a title page introduces nobody
    for blocks in blocks_by_section.values():
        speakers, by_block = read_speakers(blocks, title)
        lexicon.speakers.update(speakers)
        cue_of.update(by_block)
    speaker_norm = {normalize_name(s): s for s in lexicon.speakers}
    lexicon.proper = {s: written_as_proper(text, s) for s in lexicon.speakers}
    first_names = {
        normalize_name(s) for s, proper in lexicon.proper.items() if proper and len(s.split()) == 1
    }
    spoken = lexicon.spoken
    for blocks in blocks_by_section.values():
        for block in blocks:
            if block.kind == "action" and block.start not in preamble:
                scan_action(text, block, lexicon, first_names, spoken)
    for key, display in find_full_names(text, first_names).items():
        lexicon.full_names.setdefault(key, display)
    add = plan.lexicon.add
    for speaker, count in sorted(lexicon.speakers.items(), key=lambda kv: (-kv[1], kv[0])):
        words = set(normalize_name(speaker).split())
        entity_type = "group" if words & COLLECTIVE_EN else "character"
        key = draft.add_entity(
            entity_type, display_name(speaker), f"Speaks in {count} dialogue cue(s).", "heuristic:cue"
        )
        if key:
            add(speaker, key, PROPER if lexicon.proper[speaker] else CAPS)
    for norm, display in sorted(lexicon.full_names.items()):
        key = draft.add_entity("character", display, lexicon.intros.get(norm), "heuristic:full_name")
        add(display, key, PROPER)
        parts = display.split()
        for part in (parts[0], parts[-1]):  # first names and surnames on their own
            if normalize_name(part) not in speaker_norm:
                add(part, draft.add_entity("character", part, None, "heuristic:name_part"), PROPER)
    for norm, sentence in lexicon.intros.items():
        key = ("character", norm)
        if key in draft.entities:
            draft.describe(key, sentence)
    for (entity_type, display), sentence in sorted(lexicon.things.items()):
        key = draft.add_entity(entity_type, display, sentence, f"heuristic:{entity_type}_in_action")
        if key:
            add(display, key, PROPER if entity_type == "character" else ANY)
    for character, (role, sentence, position) in sorted(lexicon.roles.items()):
        role_key = draft.add_entity("role", role, f"Role: {sentence}", "heuristic:introduction")
        if role_key:
            plan.links.append((("character", character), role_key, sentence, ["role"], position))
            add(role, role_key, ANY)
    _add_titled_and_vocatives(draft, plan, text, sentences, speaker_norm)
    for section in sections.itertuples():
        location_key, spans = add_heading_entities(
            draft, section.heading, int(section.char_start), section.location, section.time_of_day
        )
        plan.spans.extend(spans)
        plan.headings[section.section_id] = section.heading
        if location_key:
            plan.section_locations[section.section_id] = location_key
            # "VAN" or "BAR" in lower case is any van or bar; only multi-word places match in any case.
            add(section.location, location_key, ANY if " " in section.location.strip() else PROPER)
        blocks = blocks_by_section[section.section_id]
        for block, following in zip(blocks, blocks[1:] + [None]):
            if block.kind == "cue" and block.start in cue_of:
                name = normalize_name(cue_of[block.start])
                speaker_key = ("group" if set(name.split()) & COLLECTIVE_EN else "character", name)
                plan.speaker_keys[block.speaker] = speaker_key
                draft.add_written_form(speaker_key, re.sub(r"\([^)]*\)|\^", " ", block.speaker))
                if following is not None and following.kind in ("dialogue", "parenthetical"):
                    plan.turns.append((section.section_id, speaker_key, following.start, following.end))
    return plan


def _add_titled_and_vocatives(
    draft: GraphDraft, plan: Plan, text: str, sentences: pd.DataFrame, speaker_norm: dict[str, str]
) -> None:
    for match in TITLED_NAME.finditer(text):
        surface = match.group(0)
        key = draft.add_entity("character", surface, None, "heuristic:titled_name")
        plan.lexicon.add(surface, key, PROPER)
    for match in WEEKDAY_TIME.finditer(text):
        plan.lexicon.add(
            match.group(0), draft.add_entity("time", match.group(0), None, "heuristic:weekday"), PROPER
        )
    dialogue = sentences.loc[sentences["speaker"].notna(), "text"].tolist()
    known = set(speaker_norm) | {k[1] for k in draft.entities}
    for word, count in sorted(find_vocatives(dialogue, text, known).items()):
        key = draft.add_entity(
            "character", word, f"Addressed by name in dialogue ({count} times).", "heuristic:vocative"
        )
        plan.lexicon.add(word, key, PROPER)


# -- Chinese screenplays -----------------------------------------------------------------


def _plan_zh_screenplay(draft: GraphDraft, text: str, sections: pd.DataFrame) -> Plan:
    plan = Plan(Lexicon("zh"))
    blocks_by_section = {
        s.section_id: parse_blocks(text, int(s.char_start), int(s.char_end), "zh")
        for s in sections.itertuples()
    }
    raw = Counter(
        b.speaker for blocks in blocks_by_section.values() for b in blocks if b.kind == "cue" and b.speaker
    )
    resolved = resolve_speakers(raw, text)
    counts: Counter = Counter()
    for speaker, n in raw.items():
        if speaker in resolved:
            counts[resolved[speaker].name] += n
    for name, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        entity_type = "group" if name in COLLECTIVE_ZH or name.endswith("们") else "character"
        key = draft.add_entity(entity_type, name, f"台词{count}处的说话人。", "heuristic:cue")
        plan.lexicon.add(name, key, ANY)
    for speaker, target in resolved.items():
        plan.speaker_keys[speaker] = plan.lexicon.get(target.name)
    names = sorted(counts, key=len, reverse=True)
    for given, full in sorted(given_names(names, text).items()):
        plan.lexicon.add(
            given, draft.add_entity("character", given, f"{full}的名字。", "heuristic:given_name"), ANY
        )
    for familiar, count in sorted(familiar_names(text, names).items()):
        key = draft.add_entity(
            "character", familiar, f"被称为“{familiar}”（{count}次）。", "heuristic:familiar_name"
        )
        plan.lexicon.add(familiar, key, ANY)
    for section in sections.itertuples():
        location_key, spans = add_heading_entities(
            draft, section.heading, int(section.char_start), section.location, None
        )
        plan.spans.extend(spans)
        plan.headings[section.section_id] = section.heading
        if location_key:
            plan.section_locations[section.section_id] = location_key
        blocks = blocks_by_section[section.section_id]
        for block, following in zip(blocks, blocks[1:] + [None]):
            if block.kind != "cue" or block.speaker not in resolved:
                continue
            target = resolved[block.speaker]
            key = plan.speaker_keys[block.speaker]
            start = block.start + target.offset
            plan.spans.append((start, start + len(target.name), key))
            if following is not None and following.kind == "dialogue":
                plan.turns.append((section.section_id, key, following.start, following.end))
    return plan


# -- prose ---------------------------------------------------------------------------------


def _plan_prose(draft: GraphDraft, text: str, sentences: pd.DataFrame, min_count: int, language: str) -> Plan:
    plan = Plan(Lexicon(language))
    found = read_prose(text, sentences, min_count)
    for name in sorted(found.names, key=lambda n: (-len(n), n)):
        key = draft.add_entity(found.types[name], name, None, "heuristic:prose_name")
        plan.lexicon.add(name, key, PROPER)
    for noun, count in sorted(found.roles.items()):
        key = draft.add_entity(
            "character", noun, f"Referred to as 'the {noun}' ({count} times).", "heuristic:role_actor"
        )
        plan.lexicon.add(noun, key, ANY)
    for noun, count in sorted(found.places.items()):
        key = draft.add_entity(
            "location", noun, f"Setting referred to as 'the {noun}' ({count} times).", "heuristic:setting"
        )
        plan.lexicon.add(noun, key, ANY)
    sentence_spans = sentences.sort_values("char_start")
    starts, ends = sentence_spans["char_start"].tolist(), sentence_spans["char_end"].tolist()
    sections_of = sentence_spans["section_id"].tolist()
    for start, _, who in attribution_turns(found):
        key = plan.lexicon.get(who)
        index = bisect.bisect_right(starts, start) - 1
        if key is not None and index >= 0:  # the turn is the sentence that carries the attribution
            plan.turns.append((sections_of[index], key, int(starts[index]), int(ends[index])))
    for role, name, start, _ in found.appositions:
        role_key, name_key = plan.lexicon.get(role), plan.lexicon.get(name)
        if role_key and name_key:
            plan.links.append(
                (role_key, name_key, snippet(text[max(0, start - 60) : start + 80]), ["named"], start)
            )
    return plan
