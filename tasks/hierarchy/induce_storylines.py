"""Storyline induction (paper appendix A.1, Algorithm 2): select episode chains from the cleaned
episode graph with trunk–branch segmentation (tasks/trunk_branch.py), make each chain a
storyline (name, description, impact, key characters, section span, ordered episode ids =
support edges) and relate the selected storylines with a closed relation set.

Chains follow kept `episode_relations` edges only; contrasts stay auxiliary and feed only the
storyline relations. With an LLM each storyline is named and described, several per request
(tasks/storyline_requests.py), with its relations to the later storylines structurally linked to it;
offline the text is composed from the episodes and the relations follow
tasks/storyline_relations.py.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import pandas as pd

from schemas.config import InduceStorylinesSettings
from schemas.ids import make_id
from tasks.hierarchy.storyline_relations import (
    EpisodeGraph,
    StorylineInfo,
    offline_relations,
    relation_row,
)
from tasks.hierarchy.storyline_requests import storyline_requests
from tasks.hierarchy.text import join_names, join_sentences, shorten, span_label
from tasks.hierarchy.trunk_branch import Chain, StorylineSettings, select_storylines
from tasks.hierarchy.units import CHARACTER_TYPES, as_text, entity_names, entity_types, string_list
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext, StageOutput

MAX_KEY_CHARACTERS = 5


def storyline_settings(settings: InduceStorylinesSettings) -> StorylineSettings:
    """Algorithm 2 parameters from the stage settings."""
    return StorylineSettings(
        max_depth=settings.max_depth,
        max_paths=settings.max_paths,
        max_chain_length=settings.max_chain_length,
        max_overlap=settings.max_overlap,
        min_new_episodes=settings.min_new_episodes,
        max_storylines=settings.max_storylines,
    )


def episode_graph(episodes: pd.DataFrame, relations: pd.DataFrame) -> EpisodeGraph:
    """Kept progression edges (weight s(e) clipped to [0, 1]) and auxiliary contrast edges."""
    known = set(episodes["episode_id"].astype(str))
    best: dict[tuple[str, str], float] = {}
    contrasts = []
    for r in relations.itertuples():
        pair = (str(r.source_episode_id), str(r.target_episode_id))
        if not set(pair) <= known:
            continue
        if r.status == "kept" and r.relation_type != "contrasts":
            best[pair] = max(best.get(pair, 0.0), min(1.0, max(0.0, float(r.weight))))
        elif r.status == "auxiliary":
            contrasts.append(pair)
    successors: dict[str, list[tuple[str, float]]] = defaultdict(list)
    predecessors: dict[str, set[str]] = defaultdict(set)
    for (a, b), w in sorted(best.items()):
        successors[a].append((b, w))
        predecessors[b].add(a)
    texts = {
        str(r.episode_id): " ".join(t for t in (as_text(r.title), as_text(r.summary), as_text(r.goal)) if t)
        for r in episodes.itertuples()
    }
    return EpisodeGraph(
        successors=dict(successors),
        predecessors=dict(predecessors),
        contrasts=sorted(set(contrasts)),
        texts=texts,
        ordinal={str(r.episode_id): int(r.ordinal) for r in episodes.itertuples()},
    )


def select_chains(
    graph: EpisodeGraph, characters: dict[str, frozenset[str]], settings: InduceStorylinesSettings
) -> list[Chain]:
    """Algorithm 2 lines 1-11 over the kept graph; coherence = character continuity along the chain."""
    edges = [(a, b) for a, nexts in graph.successors.items() for b, _ in nexts]
    support = {(a, b): w for a, nexts in graph.successors.items() for b, w in nexts}

    def continuity(chain: tuple[str, ...]) -> float:
        pairs = list(zip(chain, chain[1:]))
        scores = [
            len(characters[x] & characters[y]) / len(characters[x] | characters[y])
            if characters[x] | characters[y]
            else 0.0
            for x, y in pairs
        ]
        return sum(scores) / len(scores) if scores else 0.0

    return select_storylines(
        edges,
        sorted(graph.ordinal),
        storyline_settings(settings),
        edge_support=support,
        node_order=dict(graph.ordinal),
        coherence=continuity,
    )


def _title_core(title: str) -> str:
    # Composed episode titles lead with "Names: "; a storyline name needs only the event part.
    for mark in (": ", "："):
        head, sep, tail = title.partition(mark)
        if sep and len(head) <= 60 and tail:
            return tail
    return title


def compose_text(
    chain: Chain, episodes: dict[str, Any], leads: list[str], graph: EpisodeGraph, language: str
) -> dict[str, str]:
    """Offline name, description and impact of one storyline, composed from its episodes."""
    first, last = episodes[chain.episode_ids[0]], episodes[chain.episode_ids[-1]]
    arrow = " → "
    limit = 24 if language == "zh" else 60  # Chinese says as much in far fewer characters
    name = (
        shorten(_title_core(as_text(first.title)), limit)
        + arrow
        + shorten(_title_core(as_text(last.title)), limit)
    )
    if leads:
        name = f"{join_names(leads[:2], language)}{'：' if language == 'zh' else ': '}{name}"
    description = join_sentences(
        (shorten(as_text(episodes[e].summary), 180) for e in chain.episode_ids), language, 900
    )
    chain_set = set(chain.episode_ids)
    later = {b for b, _ in graph.successors.get(chain.episode_ids[-1], ())} - chain_set
    span = span_label(
        int(first.first_ordinal), int(max(episodes[e].last_ordinal for e in chain.episode_ids)), language
    )
    ending = shorten(_title_core(as_text(last.title)), 100).rstrip("。.!！?？")
    if language == "zh":
        impact = f"跨越{span}，共{len(chain.episode_ids)}个情节，结束于：{ending}。" + (
            f"其结局直接引出另外{len(later)}个情节。" if later else "此后没有情节直接承接它。"
        )
    else:
        impact = f"Spans {span} over {len(chain.episode_ids)} episodes and ends with: {ending}. " + (
            f"Its outcome leads directly into {len(later)} further episode(s)."
            if later
            else "No later episode follows directly from its outcome."
        )
    return {"name": shorten(name, 150), "description": description or name, "impact": impact}


def key_characters(chain: Chain, participants: dict[str, list[str]], types: dict[str, str]) -> list[str]:
    """Characters of the chain's episodes, most episodes first (then first appearance)."""
    counts: Counter = Counter()
    first_seen: dict[str, int] = {}
    for position, episode_id in enumerate(chain.episode_ids):
        for p in participants[episode_id]:
            if types.get(p) in CHARACTER_TYPES:
                if p not in counts:
                    first_seen[p] = position
                counts[p] += 1
    return sorted(counts, key=lambda p: (-counts[p], first_seen[p], p))[:MAX_KEY_CHARACTERS]


@dataclass(frozen=True)
class Inputs:
    """One document's episodes and lookups, as the storyline functions need them."""

    episodes: dict[str, Any]  # episode id -> row
    participants: dict[str, list[str]]
    characters: dict[str, frozenset[str]]
    types: dict[str, str]
    names: dict[str, str]
    graph: EpisodeGraph
    language: str


def storyline_rows(
    doc_id: str, chains: list[Chain], inputs: Inputs
) -> tuple[list[dict[str, Any]], list[StorylineInfo]]:
    """Offline `storylines` rows in story order, and the matching StorylineInfo for relations."""
    episodes = inputs.episodes
    chains = sorted(
        chains,
        key=lambda c: (
            inputs.graph.ordinal[c.episode_ids[0]],
            inputs.graph.ordinal[c.episode_ids[-1]],
            c.episode_ids,
        ),
    )
    rows, infos = [], []
    for number, chain in enumerate(chains, start=1):
        storyline_id = make_id("sto", doc_id, list(chain.episode_ids))
        keys = key_characters(chain, inputs.participants, inputs.types)
        text = compose_text(
            chain, episodes, [inputs.names.get(k, k) for k in keys], inputs.graph, inputs.language
        )
        sections = {s: None for e in chain.episode_ids for s in string_list(episodes[e].section_ids)}
        first = min(int(episodes[e].first_ordinal) for e in chain.episode_ids)
        last = max(int(episodes[e].last_ordinal) for e in chain.episode_ids)
        rows.append(
            {
                "storyline_id": storyline_id,
                "doc_id": doc_id,
                "ordinal": number,
                **text,
                "key_character_ids": keys,
                "episode_ids": list(chain.episode_ids),
                "section_ids": list(sections),
                "first_ordinal": first,
                "last_ordinal": last,
                "origin": chain.origin,
                "score": round(chain.score, 6),
                "method": "heuristic",
            }
        )
        goals = [as_text(episodes[e].goal) for e in chain.episode_ids]
        infos.append(
            StorylineInfo(
                storyline_id,
                f"S{number}",
                chain.episode_ids,
                first,
                last,
                frozenset().union(*(inputs.characters[e] for e in chain.episode_ids)),
                " ".join([text["name"], text["description"], *goals]),
            )
        )
    return rows, infos


def llm_storylines(
    ctx: StageContext, rows: list[dict[str, Any]], infos: list[StorylineInfo], inputs: Inputs
) -> StageOutput:
    """Name and describe each storyline and relate it to the listed others (several storylines per
    request, see storyline_requests).

    Updates `rows` in place; a failed storyline keeps its composed text and is a failures row.
    """
    doc, names, types = ctx.document, inputs.names, inputs.types
    doc_id = doc.doc_id
    plan = storyline_requests(
        infos,
        inputs.episodes,
        inputs.participants,
        names,
        types,
        inputs.graph,
        inputs.language,
        ctx.settings.induce_storylines,
    )
    batch = run_grouped(
        ctx,
        SHAPES["induce_storylines"],
        plan.groups,
        lambda ids: plan.values(ids, doc.title, doc.language),
    )
    label_to_id = {i.label: i.storyline_id for i in infos}
    name_to_id = {
        names[k].lower(): k
        for row in rows
        for e in row["episode_ids"]
        for k in inputs.participants[e]
        if k in names and types.get(k) in CHARACTER_TYPES
    }
    relations: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        this = row["storyline_id"]
        reply = batch.values.get(this)
        if reply is None:
            continue
        keys = [
            name_to_id[n.strip().lower()] for n in reply.key_characters if n.strip().lower() in name_to_id
        ]
        row.update(
            name=shorten(reply.name, 150) or row["name"],
            method="llm",
            description=reply.description.strip() or row["description"],
            impact=reply.impact.strip(),
            key_character_ids=list(dict.fromkeys(keys)) or row["key_character_ids"],
        )
        for judged in reply.relations:
            other = label_to_id.get(judged.other.strip())
            if judged.relation_type == "none" or other is None or other == this:
                continue  # labels outside the listed storylines are ignored: the LLM cannot invent arcs
            source, target = (this, other) if judged.direction == "this_to_other" else (other, this)
            relation = (
                judged.relation_type,
                source,
                target,
                round(judged.confidence, 4),
                shorten(judged.reason, 500),
            )
            relations.setdefault(tuple(sorted((source, target))), relation_row(doc_id, relation, "llm"))
    return {
        "storyline_relations": sorted(relations.values(), key=lambda r: r["relation_id"]),
        "failures": batch.failures,
        "llm_calls": batch.calls,
    }


def document_inputs(
    episodes_df: pd.DataFrame, entities: pd.DataFrame, relations: pd.DataFrame, language: str
) -> Inputs:
    """One document's episodes, lookups and cleaned episode graph."""
    types = entity_types(entities)
    episodes = {str(r.episode_id): r for r in episodes_df.itertuples()}
    participants = {e: string_list(r.participant_ids) for e, r in episodes.items()}
    return Inputs(
        episodes=episodes,
        participants=participants,
        types=types,
        names=entity_names(entities),
        characters={
            e: frozenset(p for p in ps if types.get(p) in CHARACTER_TYPES) for e, ps in participants.items()
        },
        graph=episode_graph(episodes_df, relations),
        language=language,
    )


def run(ctx: StageContext) -> StageOutput:
    doc = ctx.document
    inputs = document_inputs(
        ctx.table("episodes"), ctx.table("entities"), ctx.table("episode_relations"), doc.language
    )
    chains = select_chains(inputs.graph, inputs.characters, ctx.settings.induce_storylines)
    rows, infos = storyline_rows(doc.doc_id, chains, inputs)
    if ctx.llm is None or not rows:
        output: StageOutput = {"storyline_relations": offline_relations(doc.doc_id, infos, inputs.graph)}
    else:
        output = llm_storylines(ctx, rows, infos, inputs)
    output["storylines"] = rows
    return output
