"""The combined LLM extraction: one structured request per pack of consecutive chunks (up to
`combined_pack_tokens`) asks for the entities and relations, the narrative units (events,
interactions, occasions), the atomic facts and the characters' visible states of the passage at
once, so the source is sent once for the three construction passes and the character states.
Instructions and schema come first, the passage last.

Each packed reply is split back per chunk: the graph part as `tasks.graph.packing` splits it
(grounded into raw_entities / raw_mentions / raw_relations like the graph-only reply), the units
as `tasks.narrative.packing` splits them (by evidence quote), facts by their evidence quote (else
the chunk naming their entity, else the pack's first chunk), states as facts are. Units, facts and
states are stored per chunk in `raw_units` with names as written; extract_narrative, extract_facts
and track_character_states resolve them later.
A pack whose request fails is a `failures` row for every chunk it held.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from typing import Any, Callable

from schemas.ids import make_id
from schemas.responses.combined import (
    ITEM_REPLY_TOKENS,
    LISTS,
    CombinedExtraction,
    PassageFact,
    capped_extraction,
)
from schemas.responses.continuity import StateItem
from schemas.responses.graph import GraphExtraction
from schemas.responses.narrative import NarrativeReply
from tasks.graph.llm import graph_output, known_characters, named_in
from tasks.llm.requests.chunk_packs import Member, Pack, pack_chunks
from tasks.llm.requests.items import LLMBatch, run_structured
from tasks.llm.requests.shapes import (
    COMBINED_PROMPT_ID,
    COMBINED_REPLY_FRAME_TOKENS,
    COMBINED_REPLY_TOKENS_PER_SOURCE_TOKEN,
)
from tasks.narrative.inputs import locate_quote
from tasks.narrative.llm import member_failures
from tasks.narrative.packing import split_narrative
from tasks.stage import StageContext, StageOutput

GLEAN_PROMPT_ID = "extract_graph/v1"  # gleaning asks for missed entities and relations only
METHOD = "llm"
# The item sizes are averages, and a pack's items run longer with long quotes: at exactly the filled
# size, 4 to 6 of the bundled samples' 18 extraction requests were cut, two packs before any fact, and
# those were read again chunk by chunk (10 requests, about 0.5 computed prompt tokens per source
# token). A limit the model does not reach costs nothing: the caps, held by the grammar, end its reply.
FILLED_HEADROOM = 1.5


def pack_values(title: str, language: str, known: str, headings: str, pack: Pack) -> dict[str, str]:
    """Prompt values of one pack: the passage goes last (stable prefix for a prefix cache)."""
    return {
        "title": title,
        "language": language,
        "known_names": known,
        "heading": headings,
        "text": pack.text,
    }


def pack_headings(pack: Pack, section_of: dict[str, str], headings: dict[str, str], language: str) -> str:
    names = [headings.get(section_of.get(m.chunk_id, ""), "") for m in pack.members]
    separator = "；" if language == "zh" else "; "
    return separator.join(h for h in dict.fromkeys(names) if h) or "-"


def split_facts(
    facts: list[PassageFact], members: tuple[Member, ...], language: str = "en"
) -> list[list[PassageFact]]:
    """Facts per member chunk (same order): the first chunk holding the evidence quote, else the
    first chunk naming the fact's entity, else the pack's first chunk."""
    return _by_home(facts, members, language, lambda fact: fact.entity)


def split_states(
    states: list[StateItem], members: tuple[Member, ...], language: str = "en"
) -> list[list[StateItem]]:
    """Character states per member chunk, placed as facts are (evidence, else the character's name)."""
    return _by_home(states, members, language, lambda state: state.character)


def _by_home(
    items: list[Any], members: tuple[Member, ...], language: str, name_of: Callable[[Any], str]
) -> list[list[Any]]:
    out: list[list[Any]] = [[] for _ in members]
    for item in items:
        home = next(
            (k for k, m in enumerate(members) if locate_quote(m.text, item.evidence) is not None), None
        )
        if home is None:
            name = name_of(item).strip()
            bounded = rf"(?<!\w){re.escape(name)}(?!\w)"  # Chinese names: no word boundaries
            pattern = re.compile(re.escape(name) if language == "zh" else bounded, re.IGNORECASE)
            home = next((k for k, m in enumerate(members) if name and pattern.search(m.text)), 0)
        out[home].append(item)
    return out


def split_combined(
    reply: CombinedExtraction, members: tuple[Member, ...], language: str
) -> tuple[GraphExtraction, list[tuple[NarrativeReply, list[PassageFact], list[StateItem]]]]:
    """The pack's graph part (split later with the graph replies) and per-chunk units, facts and
    character states."""
    reply = without_repeats(reply)
    graph = GraphExtraction.model_construct(entities=reply.entities, relations=reply.relations)
    narrative = NarrativeReply.model_construct(
        events=reply.events, interactions=reply.interactions, occasions=reply.occasions
    )
    units = split_narrative(narrative, members)
    facts = split_facts(list(reply.facts), members, language)
    states = split_states(list(reply.states), members, language)
    return graph, list(zip(units, facts, states))


def without_repeats(reply: CombinedExtraction) -> CombinedExtraction:
    """The reply with each relation, event, interaction, occasion and fact said once. A small model
    repeats an item with only a side field changed (the same event under three time cues); the
    first one stays and interactions keep pointing at their event. Entities are merged later."""

    def key(*parts: Any) -> str:
        return "|".join(" ".join(str(part).casefold().split()) for part in parts)

    def first_of(items: list[Any], key_of: Callable[[Any], str]) -> tuple[list[Any], dict[int, int]]:
        kept: list[Any] = []
        index: dict[str, int] = {}
        moved: dict[int, int] = {}
        for position, item in enumerate(items):
            moved[position] = index.setdefault(key_of(item), len(kept))
            if moved[position] == len(kept):
                kept.append(item)
        return kept, moved

    events, moved = first_of(reply.events, lambda e: key(e.description))
    interactions, _ = first_of(reply.interactions, lambda i: key(i.subject, sorted(i.objects), i.description))
    interactions = [
        i if i.event_index is None else i.model_copy(update={"event_index": moved.get(i.event_index)})
        for i in interactions
    ]
    return reply.model_copy(
        update={
            "relations": first_of(reply.relations, lambda r: key(r.source, r.target, r.description))[0],
            "events": events,
            "interactions": interactions,
            "occasions": first_of(reply.occasions, lambda o: key(o.description))[0],
            "facts": first_of(reply.facts, lambda f: key(f.entity, f.text))[0],
            "states": first_of(reply.states, lambda s: key(s.character, s.state))[0],
        }
    )


def unit_rows(
    doc_id: str, chunk_id: str, units: NarrativeReply, facts: list[PassageFact], states: list[StateItem]
) -> list[dict[str, Any]]:
    """raw_units rows of one chunk: every item as JSON, in reply order within its kind."""
    rows = []
    for kind, items in (
        ("event", units.events),
        ("interaction", units.interactions),
        ("occasion", units.occasions),
        ("fact", facts),
        ("state", states),
    ):
        for position, item in enumerate(items):
            payload = item.model_dump_json()
            rows.append(
                {
                    "raw_unit_id": make_id("rawunit", doc_id, chunk_id, kind, position, payload),
                    "doc_id": doc_id,
                    "chunk_id": chunk_id,
                    "kind": kind,
                    "position": position,
                    "payload": payload,
                    "method": METHOD,
                }
            )
    return rows


def extract_combined(ctx: StageContext, offline_entities: list[dict[str, Any]]) -> StageOutput:
    """raw_entities, raw_mentions, raw_relations and raw_units from one request per pack."""
    document = ctx.document
    settings = ctx.settings.extract_graph
    chunks = ctx.table("chunks").sort_values("ordinal")
    sections = ctx.table("sections")
    headings = dict(zip(sections["section_id"], sections["heading"].fillna("").astype(str)))
    section_of = dict(zip(chunks["chunk_id"], chunks["section_id"]))
    known = known_characters(offline_entities)
    packs = pack_chunks(list(chunks.itertuples()), document.text, settings.combined_pack_tokens)

    def values_of(pack: Pack) -> dict[str, str]:
        names = named_in(known, pack.text, document.language)
        return pack_values(
            document.title, document.language, names,
            pack_headings(pack, section_of, headings, document.language), pack,
        )  # fmt: skip

    items = [(p.item_id, values_of(p)) for p in packs]
    size = dict(zip(chunks["chunk_id"], chunks["n_tokens"].astype(int)))
    longest = max((sum(size[m.chunk_id] for m in p.members) for p in packs), default=0)
    # From the pack budget, not from the longest pack of this text: the limit is part of every
    # request's cache key, and one scene grown by an edit must not change the others' keys. In
    # proportion to the source, not floored by [llm] max_tokens: a model looping in a list stops early.
    longest = max(longest, settings.combined_pack_tokens or ctx.settings.split_chunks.chunk_tokens)
    reply_model, limit = reply_model_and_limit(settings.max_items, longest)
    batch = run_structured(ctx, COMBINED_PROMPT_ID, items, reply_model, max_tokens=limit)
    batch, completed = _ask_for_the_rest(
        ctx, packs, values_of, batch, settings.max_items, longest, reply_model
    )
    packs, batch = _split_truncated_packs(ctx, packs, values_of, batch, limit, reply_model, completed)
    batch.failures = member_failures(batch.failures, packs)  # every lost chunk listed
    answered: list[tuple[Pack, GraphExtraction]] = []
    raw_units: list[dict[str, Any]] = []
    for pack in packs:
        reply = batch.values.get(pack.item_id)
        if reply is None:
            continue
        graph, per_chunk = split_combined(reply, pack.members, document.language)
        answered.append((pack, graph))
        for member, (units, facts, states) in zip(pack.members, per_chunk):
            raw_units.extend(unit_rows(document.doc_id, member.chunk_id, units, facts, states))
    output = graph_output(ctx, GLEAN_PROMPT_ID, known, answered, batch)
    return {**output, "raw_units": raw_units}


def reply_model_and_limit(
    max_items: dict[str, int], pack_tokens: int
) -> tuple[type[CombinedExtraction], int]:
    """The reply schema and its token limit for packs of up to `pack_tokens` source tokens. With
    list caps the limit also holds every capped list filled, with `FILLED_HEADROOM`: a model that
    fills each list to its cap (as a 0.5B model does) ends its reply instead of being cut in the
    first lists."""
    limit = COMBINED_REPLY_FRAME_TOKENS + COMBINED_REPLY_TOKENS_PER_SOURCE_TOKEN * pack_tokens
    if not max_items:
        return CombinedExtraction, limit
    filled = int(FILLED_HEADROOM * sum(ITEM_REPLY_TOKENS[name] * cap for name, cap in max_items.items()))
    return capped_extraction(max_items), max(limit, COMBINED_REPLY_FRAME_TOKENS + filled)


def reached_facts(reply: CombinedExtraction | None) -> bool:
    """Whether a cut reply was cut in its facts or states: the lists are written in order, so its
    entities, relations and units are whole, as many as a reply that ended has (the caps hold both).
    Asking its chunks again one at a time would read the pack a second time for the last lists
    only (about 0.5 computed prompt tokens per source token with the 0.5B model)."""
    return reply is not None and bool(reply.facts or reply.states)


def unfinished_lists(reply: CombinedExtraction) -> tuple[str, ...]:
    """The lists after the last one a cut reply wrote items in: the ones it may never have reached
    (the lists are written in order; the one it was cut in keeps its complete items)."""
    written = [k for k, name in enumerate(LISTS) if getattr(reply, name)]
    return LISTS[written[-1] + 1 :] if written else LISTS


def rest_model_and_limit(
    max_items: dict[str, int], pack_tokens: int, rest: tuple[str, ...]
) -> tuple[type[CombinedExtraction], int]:
    """The reply schema asking for the `rest` lists only (the others held empty by the grammar) and
    its token limit: those lists filled, with `FILLED_HEADROOM`, or the whole reply's limit when the
    lists are not capped."""
    model = capped_extraction({**max_items, **{name: 0 for name in LISTS if name not in rest}})
    if not max_items:
        return model, reply_model_and_limit(max_items, pack_tokens)[1]
    filled = sum(ITEM_REPLY_TOKENS[name] * max_items.get(name, 0) for name in rest)
    return model, COMBINED_REPLY_FRAME_TOKENS + int(FILLED_HEADROOM * filled)


def _ask_for_the_rest(
    ctx: StageContext,
    packs: list[Pack],
    values_of: Callable[[Pack], dict[str, str]],
    batch: LLMBatch[CombinedExtraction],
    max_items: dict[str, int],
    pack_tokens: int,
    reply_model: type[CombinedExtraction],
) -> tuple[LLMBatch[CombinedExtraction], set[str]]:
    """A pack whose reply was cut before its facts is asked for the lists it never reached, in the
    same words: the instructions (with the whole reply's field list) and the passage are the first
    request's byte for byte, so the server reads them from its prefix cache, and only the lists left
    are free in the reply's schema. Its whole lists are kept, the answer's lists added. An answer cut
    before the facts in turn is asked for what it left, while each round leaves fewer lists (a model
    looping in one list still moves on to the next). The packs that reached their facts are returned
    beside the batch; a pack whose rest is not answered, or that never reached its facts, is asked
    again chunk by chunk."""
    kept = LLMBatch(values=dict(batch.values), calls=list(batch.calls), failures=list(batch.failures))
    cut = {row["item_id"] for row in batch.calls if row["status"] == "salvaged"}  # the latest reply cut
    asked: dict[str, tuple[str, ...]] = {}  # the lists a pack's latest request for its rest left free
    answered: set[str] = set()
    for round_no in range(1, len(LISTS) + 1):
        by_rest: dict[tuple[str, ...], list[Pack]] = {}
        for pack in packs:
            reply = kept.values.get(pack.item_id)
            if pack.item_id not in cut or reply is None or reached_facts(reply):
                continue
            rest = unfinished_lists(reply)
            if len(rest) < len(asked.get(pack.item_id, LISTS)):  # the last request moved on
                by_rest.setdefault(rest, []).append(pack)
        if not by_rest:
            break
        tag = REST_TAG if round_no == 1 else f"{REST_TAG}{round_no}"
        for rest, group in by_rest.items():
            model, limit = rest_model_and_limit(max_items, pack_tokens, rest)
            items = [(f"{p.item_id}{tag}", values_of(p)) for p in group]
            again = run_structured(
                ctx, COMBINED_PROMPT_ID, items, model, max_tokens=limit, fields_from=reply_model
            )
            kept.calls += again.calls
            cut_now = {row["item_id"] for row in again.calls if row["status"] == "salvaged"}
            for pack in group:
                asked[pack.item_id] = rest
                answer = again.values.get(f"{pack.item_id}{tag}")
                if answer is None:  # not answered: no later round, and read chunk by chunk
                    continue
                update = {name: getattr(answer, name) for name in rest}
                kept.values[pack.item_id] = kept.values[pack.item_id].model_copy(update=update)
                answered.add(pack.item_id)
                if f"{pack.item_id}{tag}" not in cut_now:
                    cut.discard(pack.item_id)
    # Completed: its rest answered, and either whole or cut in its facts.
    completed = {i for i in answered if i not in cut or reached_facts(kept.values[i])}
    return kept, completed


REST_TAG = "#rest"  # the item id of a request for the rest of a pack's cut reply


def _split_truncated_packs(
    ctx: StageContext,
    packs: list[Pack],
    values_of: Callable[[Pack], dict[str, str]],
    batch: LLMBatch[CombinedExtraction],
    limit: int,
    reply_model: type[CombinedExtraction],
    completed: AbstractSet[str] = frozenset(),
) -> tuple[list[Pack], LLMBatch[CombinedExtraction]]:
    """A pack of several chunks whose reply was cut at its limit (lost, or salvaged before its facts)
    is asked again one chunk at a time, each with the pack's whole limit: a small model's reply for
    three scenes can outgrow any limit, while one scene's fits. The cut attempts stay in llm_calls;
    only chunks that fail alone are failures rows."""
    # Cut and lost, or cut and salvaged with lists it never finished.
    cut = {row["item_id"] for row in batch.failures if row["error"].startswith("llm truncated")}
    cut |= {
        row["item_id"]
        for row in batch.calls
        if row["status"] == "salvaged" and not reached_facts(batch.values.get(row["item_id"]))
    }
    cut -= completed
    split = [p for p in packs if p.item_id in cut and len(p.members) > 1]
    if not split:
        return packs, batch
    singles = {
        p.item_id: [Pack(f"{m.chunk_id}#alone", m.start, m.text, (m,)) for m in p.members] for p in split
    }
    items = [(one.item_id, values_of(one)) for p in split for one in singles[p.item_id]]
    again = run_structured(ctx, COMBINED_PROMPT_ID, items, reply_model, max_tokens=limit)
    kept = LLMBatch(
        values={k: v for k, v in batch.values.items() if k not in singles},
        calls=batch.calls + again.calls,
        failures=[row for row in batch.failures if row["item_id"] not in singles],
    )
    out: list[Pack] = []
    for pack in packs:
        if pack.item_id not in singles:
            out.append(pack)
            continue
        for alone in singles[pack.item_id]:
            out.append(alone)
            if alone.item_id in again.values:
                kept.values[alone.item_id] = again.values[alone.item_id]
    kept.failures += again.failures
    return out, kept
