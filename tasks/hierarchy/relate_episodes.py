"""Episode relation prediction (paper §3.2): label bounded candidate pairs of episodes as
causes / precedes / elaborates / contrasts, one row per predicted directed link.

Predictions live in `episode_links`; cleaning (SABER) is the next stage, so the raw,
heuristic and SABER settings all reuse the same predictions. With an LLM, candidate pairs are
judged several per request (tasks.hierarchy.relate_llm); offline a pair is labelled from
source order, shared participants and cue words (a flashback cue gives a backward edge).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

import numpy as np
import pandas as pd

from schemas.config import RelateEpisodesSettings
from schemas.ids import make_id
from tasks.embeddings import Embedder
from tasks.hierarchy.episode_candidates import (
    Candidate,
    EpisodeInfo,
    candidate_pairs,
    entity_idf,
    weighted_overlap,
)
from tasks.hierarchy.relate_llm import grouped_links
from tasks.hierarchy.unit_vectors import episode_vectors, unit_vectors, unit_weights
from tasks.hierarchy.units import (
    CHARACTER_TYPES,
    STAKE_TYPES,
    Unit,
    as_text,
    entity_names,
    entity_types,
    has_cue,
    load_units,
    string_list,
)
from tasks.index.grounded_vectors import SentenceVectors
from tasks.stage import StageContext, StageOutput
from tasks.text import index_terms


def episode_infos(episodes: pd.DataFrame, types: dict[str, str], language: str) -> list[EpisodeInfo]:
    """Episodes in source order (by ordinal) with the features candidate generation needs."""
    infos = []
    for position, r in enumerate(episodes.sort_values(["ordinal", "episode_id"]).itertuples()):
        entities = frozenset(string_list(r.participant_ids))
        text = " ".join(t for t in (as_text(r.title), as_text(r.summary), as_text(r.goal)) if t)
        infos.append(
            EpisodeInfo(
                episode_id=str(r.episode_id),
                position=position,
                first=int(r.first_ordinal),
                last=int(r.last_ordinal),
                entities=entities,
                characters=frozenset(e for e in entities if types.get(e) in CHARACTER_TYPES),
                stakes=frozenset(e for e in entities if types.get(e) in STAKE_TYPES),
                terms=frozenset(index_terms(text, language)),
                text=text,
            )
        )
    return infos


def graph_neighbours(relations: pd.DataFrame) -> dict[str, list[str]]:
    """entity -> related entities, strongest relation first."""
    weighted: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for r in relations.itertuples():
        a, b, w = str(r.source_entity_id), str(r.target_entity_id), float(r.weight or 0.0)
        weighted[a].append((w, b))
        weighted[b].append((w, a))
    return {e: [q for _, q in sorted(pairs, key=lambda t: (-t[0], t[1]))] for e, pairs in weighted.items()}


def hostile_pairs(relations: pd.DataFrame) -> set[frozenset[str]]:
    """Entity pairs whose relation is described with conflict words."""
    out = set()
    for r in relations.itertuples():
        text = " ".join([as_text(r.description)] + string_list(r.keywords))
        if has_cue(text, "conflict"):
            out.add(frozenset((str(r.source_entity_id), str(r.target_entity_id))))
    return out


def flashback_episodes(episodes: pd.DataFrame, sections: pd.DataFrame) -> set[str]:
    """Episodes told out of story order: a flashback cue in their text or their scene headings."""
    heading = {str(r.section_id): as_text(r.heading) for r in sections.itertuples()}
    out = set()
    for r in episodes.itertuples():
        texts = [as_text(r.title), as_text(r.summary)] + [
            heading.get(s, "") for s in string_list(r.section_ids)
        ]
        if any(has_cue(t, "flashback") for t in texts):
            out.add(str(r.episode_id))
    return out


Label = tuple[str, str, str, float, str]  # relation_type, source id, target id, confidence, evidence


def label_pair(
    a: EpisodeInfo,
    b: EpisodeInfo,
    cand: Candidate,
    idf: dict[str, float],
    flashbacks: set[str],
    hostile: set[frozenset[str]],
) -> Label | None:
    """Offline relation of one candidate pair (a told before b), or None when nothing links them."""
    shared_people = a.characters & b.characters
    shared_stakes = a.stakes & b.stakes
    overlap = weighted_overlap(a.entities, b.entities, idf)
    adjacent = cand.b - cand.a == 1
    interleaved = b.first <= a.last
    if (shared_people or shared_stakes) and b.episode_id in flashbacks and a.episode_id not in flashbacks:
        return (
            "precedes",
            b.episode_id,
            a.episode_id,
            round(min(0.9, 0.5 + 0.3 * overlap), 4),
            "B is told as a flashback and shares participants with A, so it happened before A",
        )
    causal_cue = has_cue(b.text, "causal") and bool(shared_people or shared_stakes)
    enemies = any(frozenset((x, y)) in hostile for x in a.characters for y in b.characters)
    if not causal_cue and not shared_people and (shared_stakes or enemies) and (interleaved or adjacent):
        why = "opposed characters" if enemies else "the same stakes pursued by different characters"
        return (
            "contrasts",
            a.episode_id,
            b.episode_id,
            round(0.45 + 0.2 * overlap, 4),
            f"parallel episodes with {why}",
        )
    if not (shared_people or shared_stakes):
        return None
    if causal_cue or (shared_stakes and has_cue(a.text, "goal")):
        cue = "B explains itself by a cause" if causal_cue else "A's goal concerns what B acts on"
        confidence = 0.5 + 0.3 * overlap + (0.1 if adjacent else 0.0)
        return (
            "causes",
            a.episode_id,
            b.episode_id,
            round(min(0.95, confidence), 4),
            f"{cue}; shared participants",
        )
    lexical = cand.signal("lexical")
    if (interleaved and lexical >= 0.15) or (not adjacent and lexical >= 0.3):
        where = "in overlapping sections" if interleaved else "returning to its situation later"
        return (
            "elaborates",
            a.episode_id,
            b.episode_id,
            round(min(0.9, 0.4 + 0.3 * lexical), 4),
            f"B develops A {where}, with the same participants and much of the same wording",
        )
    confidence = 0.35 + 0.35 * overlap + 0.15 * cand.signal("order")
    return (
        "precedes",
        a.episode_id,
        b.episode_id,
        round(min(0.9, confidence), 4),
        "A is told before B and they share participants",
    )


def link_row(doc_id: str, label: Label, method: str) -> dict[str, Any]:
    """One `episode_links` row."""
    relation_type, source, target, confidence, evidence = label
    return {
        "link_id": make_id("elk", doc_id, source, target, relation_type),
        "doc_id": doc_id,
        "source_episode_id": source,
        "target_episode_id": target,
        "relation_type": relation_type,
        "confidence": float(confidence),
        "evidence": evidence,
        "method": method,
    }


def heuristic_links(
    doc_id: str,
    infos: list[EpisodeInfo],
    candidates: list[Candidate],
    flashbacks: set[str],
    hostile: set[frozenset[str]],
    settings: RelateEpisodesSettings,
) -> list[dict[str, Any]]:
    """Offline `episode_links` rows for the candidate pairs."""
    idf = entity_idf(infos)
    rows = []
    for cand in candidates:
        label = label_pair(infos[cand.a], infos[cand.b], cand, idf, flashbacks, hostile)
        if label is not None and label[3] >= settings.min_confidence:
            rows.append(link_row(doc_id, label, "heuristic"))
    return rows


def derived_episode_vectors(
    infos: list[EpisodeInfo],
    members: dict[str, list[str]],
    units: list[Unit],
    sentences: SentenceVectors | None,
    embedder: Embedder,
    derive_units: bool,
) -> np.ndarray:
    """Episode vectors (in `infos` order) as the token-weighted mean of their units' vectors; an
    episode with no unit vector is embedded from its text."""
    ids = [info.episode_id for info in infos]
    vectors_of = dict(zip((u.unit_id for u in units), unit_vectors(units, sentences, embedder, derive_units)))
    vectors, missing = episode_vectors(ids, members, vectors_of, unit_weights(units))
    if missing:
        embedded = embedder.embed([infos[row].text for row in missing])
        if vectors.shape[1] == 0:  # no unit vector at all: the dimension comes from the model
            vectors = np.zeros((len(ids), embedded.shape[1]), dtype=np.float32)
        vectors[missing] = embedded
    return vectors


def candidate_vectors(ctx: StageContext, episodes: pd.DataFrame, infos: list[EpisodeInfo]) -> np.ndarray:
    """The episode vectors of the embedding signal, as `[relate_episodes] episode_vectors` says."""
    if ctx.settings.relate_episodes.episode_vectors == "embedded":
        return np.asarray(ctx.embedder.embed([i.text for i in infos]), dtype=np.float32)
    tables = [ctx.table(name) for name in ("sections", "entities", "events", "interactions", "occasions")]
    units = load_units(*tables)
    sentences = SentenceVectors.from_tables(ctx.tables, ctx.embedder.name)
    members = {str(e): string_list(u) for e, u in zip(episodes["episode_id"], episodes["unit_ids"])}
    derive = ctx.settings.assemble_episodes.unit_vectors == "derived"
    return derived_episode_vectors(infos, members, units, sentences, ctx.embedder, derive)


def run(ctx: StageContext) -> StageOutput:
    doc = ctx.document
    settings = ctx.settings.relate_episodes
    episodes, entities, relations = ctx.table("episodes"), ctx.table("entities"), ctx.table("relations")
    types = entity_types(entities)
    infos = episode_infos(episodes, types, doc.language)
    vectors = candidate_vectors(ctx, episodes, infos) if ctx.embedder is not None and infos else None
    candidates = candidate_pairs(
        infos, graph_neighbours(relations), settings.window, settings.max_candidates_per_episode, vectors
    )
    if ctx.llm is not None and candidates:
        output = grouped_links(ctx, infos, candidates, entity_names(entities), link_row)
    else:
        flashbacks = flashback_episodes(episodes, ctx.table("sections"))
        output = {
            "episode_links": heuristic_links(
                doc.doc_id, infos, candidates, flashbacks, hostile_pairs(relations), settings
            )
        }
    output["episode_links"] = sorted(output["episode_links"], key=lambda r: r["link_id"])
    gaps = Counter(c.b - c.a for c in candidates)  # how far apart paired episodes are (for the dry run)
    output["_details"] = {
        "episodes": len(infos),
        "candidate_pairs": len(candidates),
        "candidate_gaps": {str(g): n for g, n in sorted(gaps.items())},
    }
    return output
