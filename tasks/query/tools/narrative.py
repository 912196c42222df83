"""Narrative-channel tools: semantic search over units, episodes and storylines; traces
along event → episode → storyline links and the cleaned episode DAG; and fixed,
parameterised structured look-ups (never free SQL from a model)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import schemas
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow, provenance
from tasks.tables.io import as_list

NARRATIVE_SQL = Path(schemas.__file__).resolve().parent / "sql" / "narrative"
SQL_QUERIES = {path.stem: path.read_text(encoding="utf-8") for path in sorted(NARRATIVE_SQL.glob("*.sql"))}
UNIT_KINDS = ("event", "interaction", "occasion", "episode", "storyline")
HIERARCHY_KINDS = ("episode", "storyline")


def _unit_chunks(env: ToolEnv, unit: dict[str, Any]) -> list[str]:
    if unit.get("chunk_id"):
        return [unit["chunk_id"]]
    return as_list(unit.get("chunk_ids"))


def _episode_chunks(env: ToolEnv, episode: dict[str, Any], limit: int = 4) -> list[str]:
    chunks: list[str] = []
    for unit_id in as_list(episode["unit_ids"]):
        unit = env.store.units_by_id.get(unit_id)
        if unit is not None:
            chunks.extend(c for c in _unit_chunks(env, unit) if c not in chunks)
    return chunks[:limit]


def _episode_row(
    env: ToolEnv, episode_id: str, score: float, extra: dict[str, Any] | None = None
) -> ToolRow | None:
    episode = env.store.episodes_by_id.get(episode_id)
    if episode is None:
        return None
    text = f"{episode['title']}: {episode['summary']}"
    return ToolRow(
        "episode",
        episode_id,
        text,
        round(float(score), 6),
        "narrative",
        env.store.doc_id,
        **provenance(env.store, _episode_chunks(env, episode)),
        entity_ids=tuple(as_list(episode["participant_ids"])),
        extra={
            "first_ordinal": int(episode["first_ordinal"]),
            "last_ordinal": int(episode["last_ordinal"]),
            **(extra or {}),
        },
    )


def _storyline_row(env: ToolEnv, storyline_id: str, score: float) -> ToolRow | None:
    storyline = env.store.storylines_by_id.get(storyline_id)
    if storyline is None:
        return None
    episode_ids = as_list(storyline["episode_ids"])
    episodes = env.store.episodes_by_id
    steps = " → ".join(str(episodes[e]["title"]) for e in episode_ids if e in episodes)
    text = f"{storyline['name']}: {storyline['description']} Steps: {steps}"
    # Ground the storyline in its opening episode: where the arc starts is what questions ask first.
    chunks = (
        _episode_chunks(env, episodes[episode_ids[0]]) if episode_ids and episode_ids[0] in episodes else []
    )
    return ToolRow(
        "storyline",
        storyline_id,
        text,
        round(float(score), 6),
        "narrative",
        env.store.doc_id,
        **provenance(env.store, chunks),
        entity_ids=tuple(as_list(storyline["key_character_ids"])),
        extra={"episode_ids": episode_ids},
    )


def _unit_row(env: ToolEnv, unit_id: str, score: float) -> ToolRow | None:
    unit = env.store.units_by_id.get(unit_id)
    if unit is None:
        return None
    entity_ids = as_list(unit.get("participant_ids"))
    if unit["kind"] == "interaction":
        entity_ids = [e for e in [unit.get("subject_id"), *as_list(unit.get("object_ids"))] if e]
    span = (unit.get("char_start"), unit.get("char_end"))
    return ToolRow(
        unit["kind"],
        unit_id,
        str(unit["description"]),
        round(float(score), 6),
        "narrative",
        env.store.doc_id,
        **provenance(
            env.store,
            _unit_chunks(env, unit),
            unit.get("section_id") or None,
            (int(span[0]), int(span[1])) if span[0] is not None and span[0] == span[0] else (None, None),
        ),
        entity_ids=tuple(entity_ids),
        extra={"episode_id": env.store.episode_of_unit.get(unit_id) if env.hierarchy else None},
    )


def narrative_semantic_search(
    env: ToolEnv, query: str, kinds: list[str] | None = None, top_k: int = 8
) -> list[ToolRow]:
    """Events, interactions, occasions, episodes and storylines closest to the query."""
    hits: list[tuple[str, str, float]] = []
    kinds = [k for k in kinds or list(UNIT_KINDS) if env.hierarchy or k not in HIERARCHY_KINDS]
    for kind in kinds:
        index = env.store.asset(kind)
        if index is not None:
            hits.extend(
                (kind, unit_id, score) for unit_id, score in index.search(query, env.vector(query), top_k)
            )
    hits.sort(key=lambda item: (-item[2], item[1]))
    rows = []
    for kind, unit_id, score in hits[:top_k]:
        row = (
            _episode_row(env, unit_id, score)
            if kind == "episode"
            else _storyline_row(env, unit_id, score)
            if kind == "storyline"
            else _unit_row(env, unit_id, score)
        )
        if row is not None:
            rows.append(row)
    return rows


def narrative_trace_search(
    env: ToolEnv, query: str, direction: str = "any", hops: int = 2, top_k: int = 8
) -> list[ToolRow]:
    """Follow the anchor's episode along the cleaned DAG (predecessors for before/cause,
    successors for after/consequence) and report the storylines that contain it."""
    if not env.hierarchy:
        # Without episodes there is no progression graph to follow: the closest units are all there is.
        return narrative_semantic_search(env, query, ["event", "interaction", "occasion"], top_k=top_k)
    anchors = narrative_semantic_search(env, query, ["event", "interaction", "episode"], top_k=3)
    dag = env.store.episode_dag
    rows: list[ToolRow] = []
    seen: set[str] = set()
    for anchor in anchors:
        episode_id = anchor.item_id if anchor.kind == "episode" else anchor.extra.get("episode_id")
        if not episode_id or episode_id in seen or episode_id not in dag:
            continue
        seen.add(episode_id)
        row = _episode_row(env, episode_id, anchor.score, {"trace": "anchor"})
        if row:
            rows.append(row)
        frontier = {episode_id}
        for hop in range(1, hops + 1):
            following = set()
            for node in frontier:
                if direction in ("before", "cause", "any", "trajectory"):
                    following.update(
                        (p, "before", dag.edges[p, node]["relation_type"]) for p in dag.predecessors(node)
                    )
                if direction in ("after", "consequence", "any", "trajectory"):
                    following.update(
                        (s, "after", dag.edges[node, s]["relation_type"]) for s in dag.successors(node)
                    )
            frontier = set()
            for neighbour, side, relation_type in sorted(following):
                if direction in ("cause",) and relation_type != "causes":
                    continue
                if neighbour in seen:
                    continue
                seen.add(neighbour)
                frontier.add(neighbour)
                row = _episode_row(
                    env,
                    neighbour,
                    anchor.score / (hop + 1),
                    {"trace": f"{side} ({relation_type}, {hop} step{'s' if hop > 1 else ''} from anchor)"},
                )
                if row:
                    rows.append(row)
        for storyline_id in env.store.storylines_of_episode.get(episode_id, [])[:2]:
            if storyline_id not in seen:
                seen.add(storyline_id)
                row = _storyline_row(env, storyline_id, anchor.score / 2)
                if row:
                    rows.append(row)
    return rows[:top_k]


def narrative_sql_search(
    env: ToolEnv,
    query_name: str,
    entity_id: str | None = None,
    other_entity_id: str | None = None,
    section_ordinal: int | None = None,
    limit: int = 12,
) -> list[ToolRow]:
    """A fixed, parameterised look-up: dialogue_by_speaker, interactions_between, interactions_of,
    events_with_entity, scene_units or entity_appearances."""
    if query_name not in SQL_QUERIES:
        raise ValueError(f"unknown query {query_name!r}; choose one of {', '.join(SQL_QUERIES)}")
    entity = env.store.entities_by_id.get(entity_id) if entity_id else None
    params: dict[str, Any] = {"limit": limit}
    if query_name == "dialogue_by_speaker":
        if entity is None:
            return []
        params["names"] = sorted(
            {str(n).upper().strip() for n in [entity["name"], *as_list(entity["aliases"])]}
        )
    elif query_name == "interactions_between":
        if entity_id is None or other_entity_id is None:
            return []
        params.update(a=entity_id, b=other_entity_id)
    elif query_name == "scene_units":
        if section_ordinal is None:
            return []
        params["ordinal"] = section_ordinal
    else:
        if entity_id is None:
            return []
        params["entity_id"] = entity_id
    names, found = env.store.sql(SQL_QUERIES[query_name], params)
    rows = []
    for record in (dict(zip(names, values)) for values in found):
        item_id = (
            record.get("sentence_id")
            or record.get("interaction_id")
            or record.get("event_id")
            or record.get("unit_id")
            or f"{record.get('section_id')}"
        )
        text = (
            record.get("text")
            or record.get("description")
            or f"{record.get('heading')} ({record.get('mentions')} mentions)"
        )
        if record.get("speaker"):
            text = f"{record['speaker']}: {text}"
        rows.append(
            ToolRow(
                "sql",
                str(item_id),
                str(text),
                1.0,
                "narrative",
                env.store.doc_id,
                **provenance(
                    env.store,
                    [record["chunk_id"]] if record.get("chunk_id") else [],
                    record.get("section_id"),
                    (record.get("char_start"), record.get("char_end")),
                ),
                extra={"query": query_name},
            )
        )
    return rows
