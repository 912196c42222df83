"""Pack consecutive short chunks (scenes) into one LLM extraction request up to a token
budget, and split each packed reply back into per-chunk replies, so provenance stays per
chunk (and per span: grounding still finds every mention in its own chunk).

A packed request carries the instructions once for several scenes instead of once per
scene. An entity goes to every chunk of the pack whose text names it (name, alias or, for
characters, a name part); a relation goes to the first chunk naming both ends (else either
end, else the pack's first chunk), with the entities it needs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemas.responses.graph import GraphExtraction
from tasks.graph.name_lexicon import ANY, Lexicon
from tasks.graph.names import normalize_name
from tasks.request_groups import is_cut

CUT_BUDGETS = 2  # budgets of tokens between content-defined pack boundaries, on average


@dataclass(frozen=True)
class Member:
    chunk_id: str
    start: int
    text: str


@dataclass(frozen=True)
class Pack:
    item_id: str  # the first chunk's id: a failed pack is a failures row for it
    start: int
    text: str  # the document span from the first chunk's start to the last chunk's end
    members: tuple[Member, ...]


def ends_pack(text: str, tokens: int, budget: int) -> bool:
    """A content-defined pack boundary after a chunk: decided by a hash of the chunk's own text
    (tasks.request_groups), on average once per `CUT_BUDGETS` budgets of tokens. Filling packs up to
    the budget alone moves every later boundary when one chunk grows, and every later request then
    misses the LLM cache; after such a cut the packs start again whatever came before."""
    return budget > 0 and is_cut(text, tokens / (CUT_BUDGETS * budget))


def pack_chunks(chunks: list[Any], document_text: str, budget: int) -> list[Pack]:
    """Consecutive chunks (rows with chunk_id, char_start, char_end, n_tokens, text, in order)
    grouped while their tokens fit `budget`, a pack also ending after a chunk that `ends_pack`;
    budget 0 keeps one chunk per request."""
    groups: list[list[Any]] = []
    used = 0
    cut = False
    for chunk in chunks:
        tokens = int(chunk.n_tokens)
        if not groups or budget <= 0 or cut or used + tokens > budget:
            groups.append([])
            used = 0
        groups[-1].append(chunk)
        used += tokens
        cut = ends_pack(str(chunk.text), tokens, budget)
    packs = []
    for group in groups:
        start, end = int(group[0].char_start), int(group[-1].char_end)
        members = tuple(Member(c.chunk_id, int(c.char_start), c.text) for c in group)
        text = group[0].text if len(group) == 1 else document_text[start:end]
        packs.append(Pack(group[0].chunk_id, start, text, members))
    return packs


def split_reply(reply: GraphExtraction, members: tuple[Member, ...], language: str) -> list[GraphExtraction]:
    """One reply per member chunk (same order) from the reply to their packed request."""
    if len(members) == 1:
        return [reply]
    lexicon = Lexicon(language)
    index_of: dict[str, int] = {}
    for position, entity in enumerate(reply.entities):
        surfaces = [entity.name, *entity.aliases]
        parts = normalize_name(entity.name).split()
        if language != "zh" and entity.type == "character" and len(parts) >= 2:
            surfaces += [p for p in (parts[0], parts[-1]) if len(p) >= 3]
        for surface in surfaces:
            if normalize_name(surface):
                index_of.setdefault(normalize_name(surface), position)
                lexicon.add(surface.strip(), position, ANY)
    for relation in reply.relations:  # an end that is no listed entity (a proxy later) is found by its name
        for end in (relation.source, relation.target):
            if normalize_name(end) and normalize_name(end) not in index_of:
                lexicon.add(end.strip(), "~" + normalize_name(end), ANY)
    named = [{key for _, _, key in lexicon.find_spans(m.text, 0)} for m in members]
    relations: list[list[Any]] = [[] for _ in members]
    needed: list[set[int]] = [set() for _ in members]
    for relation in reply.relations:
        ends = [
            index_of.get(normalize_name(e), "~" + normalize_name(e))
            for e in (relation.source, relation.target)
        ]
        both = [k for k in range(len(members)) if all(e in named[k] for e in ends)]
        either = [k for k in range(len(members)) if any(e in named[k] for e in ends)]
        target = (both or either or [0])[0]
        relations[target].append(relation)
        needed[target].update(e for e in ends if isinstance(e, int))
    anywhere = {key for keys in named for key in keys if isinstance(key, int)}.union(*needed)
    unplaced = {
        i for i in range(len(reply.entities)) if i not in anywhere
    }  # to the first chunk: dropped there
    replies = []
    for k in range(len(members)):
        keep = {key for key in named[k] if isinstance(key, int)} | needed[k] | (unplaced if k == 0 else set())
        # The items were validated with the packed reply, whose lists may be longer than one
        # chunk's reply model allows (a combined pack answers up to 120 entities): not re-validated.
        replies.append(
            GraphExtraction.model_construct(
                entities=[e for i, e in enumerate(reply.entities) if i in keep], relations=relations[k]
            )
        )
    return replies
