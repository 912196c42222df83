"""induce_storylines' LLM requests, several storylines per request: the episodes the storylines
of a request run through (and those of the other storylines they are asked about) are one line
each, labelled E1, E2, ... in story order (see episode_records.episode_line); each storyline is a
numbered item naming its episodes by label, its characters, and the other storylines to judge
with the structural signals that make them worth asking. Storylines, in the order
induce_storylines gives them, are grouped while their episodes fit a token budget, with
content-defined boundaries (tasks.llm.requests.request_groups)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from schemas.config import InduceStorylinesSettings
from tasks.hierarchy.episode_records import episode_line
from tasks.hierarchy.storyline_relations import EpisodeGraph, StorylineInfo, ordered_pairs, pair_hints
from tasks.hierarchy.units import CHARACTER_TYPES
from tasks.llm.requests.request_groups import stable_groups
from tasks.text import count_tokens

MAX_CHARACTERS = 20


@dataclass(frozen=True)
class Partner:
    label: str
    episode_ids: tuple[str, ...]
    signals: tuple[str, ...]


@dataclass(frozen=True)
class StorylineRequests:
    infos: dict[str, StorylineInfo]  # storyline id -> its info
    characters: dict[str, list[str]]  # storyline id -> names of its characters
    partners: dict[str, list[Partner]]  # storyline id -> the other storylines to judge
    lines: dict[str, str]  # episode id -> its line (without the label)
    order: dict[str, int]  # episode id -> story position
    groups: list[list[str]]

    def shown(self, storyline_id: str) -> tuple[str, ...]:
        own = self.infos[storyline_id].episode_ids
        return own + tuple(e for p in self.partners[storyline_id] for e in p.episode_ids)

    def values(self, ids: list[str], title: str, language: str) -> dict[str, str]:
        zh = language == "zh"
        episodes = sorted({e for i in ids for e in self.shown(i)}, key=lambda e: (self.order.get(e, 0), e))
        label = {e: f"E{n}" for n, e in enumerate(episodes, 1)}
        arrow = " → "
        asked = {self.infos[i].label for i in ids}
        items = []
        for n, storyline_id in enumerate(ids, 1):
            info = self.infos[storyline_id]
            lines = [f"{n}. {info.label}: {arrow.join(label[e] for e in info.episode_ids)}"]
            cast = ", ".join(self.characters[storyline_id]) or "-"
            lines.append(f"人物：{cast}" if zh else f"characters: {cast}")
            for p in self.partners[storyline_id]:
                # A partner numbered in the same request shows its episodes there; else they are listed.
                chain = "" if p.label in asked else arrow.join(label[e] for e in p.episode_ids)
                signals = "；".join(p.signals) if zh else "; ".join(p.signals)
                if zh:
                    lines.append(f"另一条 {p.label}" + (f"（{chain}）" if chain else "") + f"：{signals}")
                else:
                    lines.append(f"other {p.label}" + (f" ({chain})" if chain else "") + f": {signals}")
            items.append("\n".join(lines))
        return {
            "document_title": title,
            "episodes": "\n".join(f"{label[e]} {self.lines[e]}" for e in episodes),
            "storylines": "\n\n".join(items),
        }


def storyline_requests(
    infos: Sequence[StorylineInfo],
    episodes: Mapping[str, Any],
    participants: Mapping[str, Sequence[str]],
    names: Mapping[str, str],
    types: Mapping[str, str],
    graph: EpisodeGraph,
    language: str,
    settings: InduceStorylinesSettings,
) -> StorylineRequests:
    """The storylines of one document grouped into requests; each pair of storylines with a
    structural signal is offered once, to the earlier-starting one."""
    partners: dict[str, list[Partner]] = defaultdict(list)
    for a, b in ordered_pairs(infos):
        hints = pair_hints(a, b, graph, names)
        if hints:
            partners[a.storyline_id].append(Partner(b.label, b.episode_ids, tuple(hints)))
    characters = {
        info.storyline_id: sorted(
            {
                names[p]
                for e in info.episode_ids
                for p in participants[e]
                if p in names and types.get(p) in CHARACTER_TYPES
            }
        )[:MAX_CHARACTERS]
        for info in infos
    }
    by_id = {info.storyline_id: info for info in infos}
    plan = StorylineRequests(
        by_id,
        characters,
        {i: partners.get(i, []) for i in by_id},
        {},
        {e: int(r.ordinal) for e, r in episodes.items()},
        [],
    )
    named = {e for i in by_id for e in plan.shown(i)}
    lines = {e: episode_line(episodes[e], names, language) for e in named}
    cost = {e: count_tokens(line) + 2 for e, line in lines.items()}  # + its label
    # Boundaries keyed by what a storyline shows (its episodes' lines), not by ids, which hash
    # character spans that move when an earlier scene is edited.
    items = [(i, "\n".join(lines[e] for e in plan.shown(i)), plan.shown(i)) for i in by_id]
    groups = stable_groups(items, cost, settings.pack_tokens, settings.max_per_request)
    return StorylineRequests(by_id, characters, plan.partners, lines, plan.order, groups)
