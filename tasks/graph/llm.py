"""The LLM graph extractor: one structured request per pack of consecutive chunks up to a token
budget (plus an optional gleaning round), each packed reply split back per chunk, then every
returned entity is grounded to spans of its chunk.

An entity whose name and aliases cannot be found in the chunk is kept (without mentions)
only when a relation needs it; otherwise it is dropped and counted in a warning. Relation
endpoints that are not among the extracted entities become proxy entities. A pack whose
request fails is a `failures` row (for its first chunk); the other chunks carry on.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

from schemas.responses.graph import GraphExtraction
from schemas.tables.graph import ENTITY_TYPES
from tasks.graph.name_lexicon import ANY, Lexicon
from tasks.graph.names import normalize_name
from tasks.graph.packing import split_reply
from tasks.graph.section_labels import is_section_label, label_keys
from tasks.graph.upsert import ChunkIndex, EntityKey, GraphDraft
from tasks.llm.requests.chunk_packs import Pack, pack_chunks
from tasks.llm.requests.items import LLMBatch, run_structured
from tasks.stage import StageContext, StageOutput

GLEAN_SUFFIX = "#glean"
MAX_KNOWN_NAMES = 40


@dataclass(frozen=True)
class ChunkReply:
    chunk_id: str
    start: int
    text: str
    reply: GraphExtraction
    method: str


def known_characters(raw_entities: list[dict[str, Any]]) -> list[str]:
    """The most mentioned characters of the offline reading (at most MAX_KNOWN_NAMES)."""
    characters = sorted(
        (e for e in raw_entities if e["entity_type"] == "character"),
        key=lambda e: (-e["n_mentions"], e["name"]),
    )[:MAX_KNOWN_NAMES]
    return [str(e["name"]) for e in characters]


def named_in(names: list[str], text: str, language: str) -> str:
    """The known characters a passage names, in alphabetical order, as a list for its prompt.

    Only the passage's own: a list of the whole document's, ordered by mention counts, would
    change every request's prompt (and miss the LLM cache) whenever one scene gains a mention."""
    folded = text.casefold()
    found = sorted(
        n
        for n in set(names)
        if (n in text if language == "zh" else re.search(rf"(?<!\w){re.escape(n.casefold())}(?!\w)", folded))
    )
    separator = "、" if language == "zh" else ", "
    return separator.join(found) or ("（无）" if language == "zh" else "(none)")


def _values(title: str, language: str, known: str, text: str, already: str) -> dict[str, str]:
    return {
        "title": title,
        "language": language,
        "known_names": known,
        "already_found": already,
        "text": text,
    }


def _already_found(reply: GraphExtraction, language: str) -> str:
    entities = [f"{e.name} ({e.type})" for e in reply.entities]
    relations = [f"{r.source} - {r.target}" for r in reply.relations]
    if language == "zh":
        return f"实体：{'、'.join(entities) or '无'}；关系：{'、'.join(relations) or '无'}"
    return f"entities: {', '.join(entities) or 'none'}; relations: {', '.join(relations) or 'none'}"


def extract_with_llm(
    ctx: StageContext, prompt_id: str, offline_entities: list[dict[str, Any]]
) -> StageOutput:
    """raw_* rows from per-chunk LLM replies, with failures and llm_calls rows."""
    document = ctx.document
    settings = ctx.settings.extract_graph
    chunks = ctx.table("chunks").sort_values("ordinal")
    known = known_characters(offline_entities)
    nothing = "（尚无）" if document.language == "zh" else "(nothing yet)"
    packs = pack_chunks(list(chunks.itertuples()), document.text, settings.pack_tokens)
    language = document.language
    items = [
        (p.item_id, _values(document.title, language, named_in(known, p.text, language), p.text, nothing))
        for p in packs
    ]
    batch: LLMBatch[GraphExtraction] = run_structured(ctx, prompt_id, items, GraphExtraction)
    by_pack = {p.item_id: p for p in packs}
    answered = [(by_pack[item_id], reply) for item_id, reply in batch.values.items()]
    answered.sort(key=lambda pr: pr[0].start)
    return graph_output(ctx, prompt_id, known, answered, batch)


def graph_output(
    ctx: StageContext,
    glean_prompt_id: str,
    known: list[str],
    answered: list[tuple[Pack, GraphExtraction]],
    batch: LLMBatch[Any],
) -> StageOutput:
    """raw_* rows (plus failures, llm_calls and warnings) from the answered packs, in document
    order, after the optional gleaning round (asked with `glean_prompt_id`)."""
    document = ctx.document
    settings = ctx.settings.extract_graph
    chunks = ctx.table("chunks").sort_values("ordinal")
    replies = _chunk_replies(answered, document.language, "llm")
    if settings.gleaning and answered:
        by_pack = {p.item_id: p for p, _ in answered}
        glean_items = [
            (
                p.item_id + GLEAN_SUFFIX,
                _values(
                    document.title,
                    document.language,
                    named_in(known, p.text, document.language),
                    p.text,
                    _already_found(reply, document.language),
                ),
            )
            for p, reply in answered
        ]
        gleaned = run_structured(ctx, glean_prompt_id, glean_items, GraphExtraction)
        batch.calls.extend(gleaned.calls)
        batch.failures.extend(gleaned.failures)
        extra = [
            (by_pack[item_id[: -len(GLEAN_SUFFIX)]], reply)
            for item_id, reply in sorted(gleaned.values.items())
        ]
        replies.extend(_chunk_replies(extra, document.language, "llm:gleaning"))
    draft = GraphDraft(document.doc_id, document.text, ChunkIndex(chunks))
    headings = label_keys(ctx.table("sections")["heading"])
    dropped = ground_replies(draft, replies, document.language, headings)
    rows = draft.to_rows(settings.max_description_chars)
    warnings = (
        [
            f"{dropped} extracted entit(ies) dropped: not found in their chunk and needed by no relation, "
            "or a label of the text (a scene heading, a section title)"
        ]
        if dropped
        else []
    )
    if batch.failures:
        warnings.append(f"{len(batch.failures)} LLM item(s) failed (see failures)")
    return {**rows, "failures": batch.failures, "llm_calls": batch.calls, "_warnings": warnings}


def _chunk_replies(
    answered: list[tuple[Pack, GraphExtraction]], language: str, method: str
) -> list[ChunkReply]:
    """Per-chunk replies from packed replies, in document order."""
    replies = []
    for pack, reply in answered:
        for member, part in zip(pack.members, split_reply(reply, pack.members, language)):
            replies.append(ChunkReply(member.chunk_id, member.start, member.text, part, method))
    return replies


def _majority_types(replies: list[ChunkReply]) -> dict[str, str]:
    """One type per normalized name: the most frequent across chunks (ties by the schema's order)."""
    votes: dict[str, Counter] = defaultdict(Counter)
    for reply in replies:
        for entity in reply.reply.entities:
            votes[normalize_name(entity.name)][entity.type] += 1
    return {
        name: sorted(counts.items(), key=lambda kv: (-kv[1], ENTITY_TYPES.index(kv[0])))[0][0]
        for name, counts in votes.items()
        if name
    }


def ground_replies(
    draft: GraphDraft, replies: list[ChunkReply], language: str, headings: set[str] | None = None
) -> int:
    """Add grounded entities, mentions and relations of every reply; returns the number of
    distinct entities dropped (never grounded and never needed by a relation, or a label of the
    text's structure: a scene heading, a section's heading in `headings`, "Scene 3")."""
    headings = headings or set()
    labels = {
        normalize_name(e.name)
        for r in replies
        for e in r.reply.entities
        if is_section_label(e.name, headings, language)
    }
    types = _majority_types(replies)
    display = {normalize_name(e.name): e.name for r in replies for e in r.reply.entities}
    proposed: set[EntityKey] = set()
    for reply in replies:
        keys: dict[str, EntityKey] = {}  # normalized name or alias -> entity key, in this chunk
        lexicon = Lexicon(language)
        pending: list[tuple[EntityKey, str, str]] = []
        for entity in reply.reply.entities:
            name = normalize_name(entity.name)
            if not name:
                continue
            key = (types[name], name)
            if name in labels:
                proposed.add(key)  # counted as dropped; a relation naming it is dropped too
                continue
            pending.append((key, entity.name, entity.description))
            for surface in [entity.name, *entity.aliases]:  # another entity's name: split_reply took it out
                if normalize_name(surface):
                    keys.setdefault(normalize_name(surface), key)
                    lexicon.add(surface.strip(), key, ANY)
        for key, _, _ in pending:  # name parts last: "Buckingham" for "John Buckingham" only if free
            parts = key[1].split()
            if language != "zh" and key[0] == "character" and len(parts) >= 2:
                for part in (parts[0], parts[-1]):
                    if len(part) >= 3:
                        lexicon.add(part, key, ANY)
        proposed.update(key for key, _, _ in pending)
        spans = lexicon.find_spans(reply.text, reply.start)
        grounded = {key for _, _, key in spans}
        needed: set[EntityKey] = set()
        for relation in reply.reply.relations:
            ends = (relation.source, relation.target)
            # An endpoint that labels the text ("1 EXT. PIER - NIGHT", "Preamble") would come back
            # as a proxy entity: the relation is dropped, as one naming a label entity is.
            if any(normalize_name(e) in labels or is_section_label(e, headings, language) for e in ends):
                continue
            a = _endpoint(draft, keys, types, display, relation.source, reply, language)
            b = _endpoint(draft, keys, types, display, relation.target, reply, language)
            if a is None or b is None or a == b:
                continue
            needed.update((a, b))
            pair = (a, b)
            for key, name, description in pending:
                if key in pair:
                    draft.add_entity(key[0], name, description, reply.method)
            draft.add_relation(
                a,
                b,
                relation.description,
                relation.keywords,
                [reply.chunk_id],
                weight=float(relation.strength),
                method=reply.method,
            )
        for key, name, description in pending:
            if key in grounded and key not in needed:
                draft.add_entity(key[0], name, description, reply.method)
        for start, end, key in spans:
            draft.add_mention(key, start, end)
    return len(proposed - set(draft.entities))


def _endpoint(
    draft: GraphDraft,
    keys: dict[str, EntityKey],
    types: dict[str, str],
    display: dict[str, str],
    name: str,
    reply: ChunkReply,
    language: str,
) -> EntityKey | None:
    """The entity a relation endpoint names: in this chunk, else anywhere in the document, else a proxy."""
    normalized = normalize_name(name)
    if not normalized:
        return None
    if normalized in keys:
        return keys[normalized]
    if normalized in types:  # extracted in another chunk of the document
        return draft.add_entity(types[normalized], display[normalized], method=reply.method)
    key = draft.add_entity(
        "concept",
        name,
        # No chunk id here: it hashes the chunk's span, which moves with an edit of an earlier scene,
        # and descriptions reach later prompts.
        "Named in a relation but not extracted as an entity.",
        "llm:proxy",
        is_proxy=True,
    )
    lexicon = Lexicon(language)
    lexicon.add(name.strip(), key, ANY)
    for start, end, found in lexicon.find_spans(reply.text, reply.start):
        draft.add_mention(found, start, end)
    return key
