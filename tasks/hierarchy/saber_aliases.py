"""Names for SABER's episodes and relations that stay put when an earlier scene is edited.

Episode and relation ids hash character spans, so one sentence added to a scene gives every later
episode a new id. SABER breaks ties by id (which cycle edge goes first, which path is tried first),
so new ids alone would change which shortcut questions it asks, and every shortcut request after
them. Under these aliases it sees the episodes by their place in the story: the first section, the
last section and the rank among the episodes that start in the same section, which an edit of
another scene leaves alone. The aliases are mapped back before anything is written."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from tasks.hierarchy.saber_model import SaberAction, SaberResult


@dataclass(frozen=True)
class Aliases:
    episodes: dict[str, str]  # episode id -> alias
    relations: dict[str, str]  # link id -> alias

    def episode(self, episode_id: str) -> str:
        return self.episodes.get(episode_id, episode_id)


def episode_aliases(episodes: pd.DataFrame) -> dict[str, str]:
    """Episode id -> `e<first section>.<last section>.<rank among episodes starting there>`."""
    if episodes.empty:
        return {}
    rows = episodes.sort_values(["first_ordinal", "ordinal"])
    aliases, rank, section = {}, 0, None
    for episode_id, first, last in zip(rows["episode_id"], rows["first_ordinal"], rows["last_ordinal"]):
        rank = rank + 1 if first == section else 0
        section = first
        aliases[str(episode_id)] = f"e{int(first):06d}.{int(last):06d}.{rank:03d}"
    return aliases


def aliased(links: pd.DataFrame, episodes: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, Aliases]:
    """The links and episodes under their aliases, and the aliases to map a result back."""
    names = episode_aliases(episodes)
    alias = Aliases(names, {})
    links = links.copy()
    links["source_episode_id"] = [alias.episode(str(e)) for e in links["source_episode_id"]]
    links["target_episode_id"] = [alias.episode(str(e)) for e in links["target_episode_id"]]
    relation_names = [
        f"{s}>{t}:{kind}"
        for s, t, kind in zip(links["source_episode_id"], links["target_episode_id"], links["relation_type"])
    ]
    if len(set(relation_names)) != len(relation_names):  # two links on one typed pair: keep the ids
        relation_names = [str(i) for i in links["link_id"]]
    alias.relations.update(zip(map(str, links["link_id"]), relation_names))
    links["link_id"] = relation_names
    episodes = episodes.copy()
    episodes["episode_id"] = [alias.episode(str(e)) for e in episodes["episode_id"]]
    return links, episodes, alias


def restored(result: SaberResult, alias: Aliases) -> SaberResult:
    """`result` with the aliases replaced by the ids they stand for."""
    episode = {a: e for e, a in alias.episodes.items()}
    relation = {a: r for r, a in alias.relations.items()}

    def action(a: SaberAction) -> SaberAction:
        return replace(
            a,
            relation_id=relation.get(a.relation_id, a.relation_id),
            source=episode.get(a.source, a.source),
            target=episode.get(a.target, a.target),
            indirect_path=tuple(episode.get(e, e) for e in a.indirect_path),
        )

    edges = tuple(
        replace(
            e,
            relation_id=relation.get(e.relation_id, e.relation_id),
            source=episode.get(e.source, e.source),
            target=episode.get(e.target, e.target),
        )
        for e in result.edges
    )
    return SaberResult(
        status={relation.get(r, r): s for r, s in result.status.items()},
        actions=[action(a) for a in result.actions],
        edges=edges,
    )
