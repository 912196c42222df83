"""Split a packed extraction reply (`tasks.llm.requests.chunk_packs`) back into per-chunk replies,
so provenance stays per chunk (and per span: grounding still finds every mention in its own chunk).

A packed request carries the instructions once for several scenes instead of once per
scene. An entity goes to every chunk of the pack whose text names it (name, alias or, for
characters, a name part); a relation goes to the first chunk naming both ends (else either
end, else the pack's first chunk), with the entities it needs.
"""

from __future__ import annotations

from typing import Any

from schemas.responses.graph import GraphExtraction
from tasks.graph.name_lexicon import ANY, Lexicon
from tasks.graph.names import normalize_name, own_aliases
from tasks.llm.requests.chunk_packs import Member


def split_reply(reply: GraphExtraction, members: tuple[Member, ...], language: str) -> list[GraphExtraction]:
    """One reply per member chunk (same order) from the reply to their packed request."""
    listed = {normalize_name(e.name) for e in reply.entities}
    entities = [
        e.model_copy(update={"aliases": own_aliases(e.aliases, e.name, listed)}) for e in reply.entities
    ]
    reply = reply.model_copy(update={"entities": entities})
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
