"""Split the reply to a packed extract_narrative request (consecutive chunks up to a token
budget, packed by tasks.graph.packing) back into one reply per chunk, so every unit keeps its
own chunk and evidence span.

An event or interaction goes to the first chunk of the pack that holds its evidence quote (else
to the chunk naming most of its participants, else the pack's first chunk); an interaction's
`event_index` is renumbered within its chunk (null when its event landed elsewhere). An
"scene" occasion goes to the chunk naming most of its participants and setting; any other
occasion to every chunk naming one of them (else the first).
"""

from __future__ import annotations

import re

from schemas.responses.narrative import NarrativeReply
from tasks.llm.requests.chunk_packs import Member
from tasks.narrative.inputs import locate_quote


def _named(folded: str, names: list[str]) -> int:
    """How many of `names` occur as whole words in `folded` (a casefolded text)."""
    count = 0
    for name in names:
        needle = name.casefold() if name else ""
        # The substring test first: most names are absent from most chunks of a pack, and the
        # word-bounded pattern (built per name) is only needed where the name occurs at all.
        if needle and needle in folded and re.search(rf"\b{re.escape(needle)}\b", folded):
            count += 1
    return count


def _home(members: tuple[Member, ...], folded: list[str], evidence: str, names: list[str]) -> int:
    for index, member in enumerate(members):
        if locate_quote(member.text, evidence) is not None:
            return index
    counts = [_named(text, names) for text in folded]
    best = max(range(len(members)), key=lambda k: (counts[k], -k))
    return best if counts[best] else 0


def split_narrative(reply: NarrativeReply, members: tuple[Member, ...]) -> list[NarrativeReply]:
    """One reply per member chunk (same order) from the reply to their packed request."""
    if len(members) <= 1:
        return [reply]
    folded = [member.text.casefold() for member in members]  # once per pack, not per unit and name
    events: list[list] = [[] for _ in members]
    position: dict[int, tuple[int, int]] = {}  # pack event index -> (member, index within member)
    for index, event in enumerate(reply.events):
        home = _home(members, folded, event.evidence, [*event.participants, event.setting or ""])
        position[index] = (home, len(events[home]))
        events[home].append(event)
    interactions: list[list] = [[] for _ in members]
    for item in reply.interactions:
        home = _home(members, folded, item.evidence, [item.subject, *item.objects])
        linked = position.get(item.event_index) if item.event_index is not None else None
        event_index = linked[1] if linked is not None and linked[0] == home else None
        interactions[home].append(item.model_copy(update={"event_index": event_index}))
    occasions: list[list] = [[] for _ in members]
    for occasion in reply.occasions:
        names = [*occasion.participants, occasion.setting or ""]
        counts = [_named(text, names) for text in folded]
        if occasion.occasion_type == "scene":  # one scene: the chunk naming most of it
            best = max(range(len(members)), key=lambda k: (counts[k], -k))
            homes = [best]
        else:
            homes = [k for k, count in enumerate(counts) if count] or [0]
        for home in homes:
            occasions[home].append(occasion)
    return [
        NarrativeReply.model_construct(events=e, interactions=i, occasions=o)
        for e, i, o in zip(events, interactions, occasions)
    ]
