"""Episode relation prediction (paper §3.2): label bounded candidate pairs of episodes as
causes / precedes / elaborates / contrasts, one row per predicted directed link.

Predictions live in `episode_links`; cleaning (SABER) is the next stage, so the raw,
heuristic and SABER settings all reuse the same predictions. With an LLM each episode gets one
request judging all its candidate pairs (requests sent as one batch); offline a pair is labelled from
source order, shared participants and cue words (a flashback cue gives a backward edge).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pandas as pd

from schemas.config import RelateEpisodesSettings
from schemas.responses.hierarchy import EpisodeRelationBatch
from tasks.stage import StageContext, StageOutput
from tasks.hierarchy.episode_candidates import (
    Candidate,
    EpisodeInfo,
    candidate_pairs,
    entity_idf,
    weighted_overlap,
)
from tasks.hierarchy.text import shorten, span_label
from tasks.hierarchy.units import (
    CHARACTER_TYPES,
    STAKE_TYPES,
    as_text,
    entity_names,
    entity_types,
    has_cue,
    string_list,
)
from schemas.ids import make_id
from tasks.llm.items import run_structured
from tasks.text import index_terms

PROMPT_ID = "relate_episodes/v2"


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


def _describe(r: Any, names: dict[str, str], language: str) -> dict[str, str]:
    people = ", ".join(names.get(p, p) for p in string_list(r.participant_ids)[:8]) or "-"
    return {
        "title": as_text(r.title),
        "sections": span_label(int(r.first_ordinal), int(r.last_ordinal), language),
        "participants": people,
        "summary": shorten(as_text(r.summary), 900),
        "goal": as_text(r.goal) or "-",
    }


CANDIDATE_SUMMARY_CHARS = 500
_FIELDS = {
    "en": (
        "{label} ({sections}): {title}\nParticipants: {participants}\nGoal or conflict: {goal}\n"
        "Summary: {summary}"
    ),
    "zh": "{label}（{sections}）：{title}\n参与者：{participants}\n目标或冲突：{goal}\n概要：{summary}",
}


def candidate_block(described: list[dict[str, str]], language: str) -> str:
    """The listed episodes of one request, labelled E1, E2, ... in candidate order."""
    template = _FIELDS["zh" if language == "zh" else "en"]
    return "\n\n".join(
        template.format(label=f"E{i}", **{**d, "summary": shorten(d["summary"], CANDIDATE_SUMMARY_CHARS)})
        for i, d in enumerate(described, start=1)
    )


def llm_links(
    ctx: StageContext, infos: list[EpisodeInfo], candidates: list[Candidate], names: dict[str, str]
) -> StageOutput:
    """`episode_links` from one LLM request per anchor episode judging all its candidate pairs at
    once (the instructions and the anchor are sent once, not once per pair), plus failures and
    llm_calls rows. A pair the reply leaves out is counted in a warning and gets no link."""
    doc = ctx.document
    episodes = {str(r.episode_id): r for r in ctx.table("episodes").itertuples()}
    by_anchor: dict[int, list[Candidate]] = defaultdict(list)
    for cand in candidates:
        by_anchor[cand.a].append(cand)
    items = []
    for anchor, group in sorted(by_anchor.items()):
        a = _describe(episodes[infos[anchor].episode_id], names, doc.language)
        listed = [_describe(episodes[infos[c.b].episode_id], names, doc.language) for c in group]
        items.append(
            (
                infos[anchor].episode_id,
                {
                    "document_title": doc.title,
                    **{f"a_{k}": v for k, v in a.items()},
                    "candidates": candidate_block(listed, doc.language),
                },
            )
        )
    batch = run_structured(ctx, PROMPT_ID, items, EpisodeRelationBatch)
    rows, unanswered = [], 0
    for anchor, group in sorted(by_anchor.items()):
        a_id = infos[anchor].episode_id
        reply = batch.values.get(a_id)
        if reply is None:
            continue
        judged: dict[str, Any] = {}
        for judgment in reply.judgments:
            judged.setdefault(judgment.other.strip().upper(), judgment)
        for position, cand in enumerate(group, start=1):
            b_id = infos[cand.b].episode_id
            judgment = judged.get(f"E{position}")
            if judgment is None:
                unanswered += 1
                continue
            if (
                judgment.relation_type == "none"
                or judgment.confidence < ctx.settings.relate_episodes.min_confidence
            ):
                continue
            source, target = (a_id, b_id) if judgment.direction == "A_to_B" else (b_id, a_id)
            rows.append(
                link_row(
                    doc.doc_id,
                    (
                        judgment.relation_type,
                        source,
                        target,
                        round(judgment.confidence, 4),
                        shorten(judgment.reason, 500),
                    ),
                    "llm",
                )
            )
    warnings = [f"{unanswered} candidate pair(s) left unjudged by the LLM reply"] if unanswered else []
    return {
        "episode_links": rows,
        "failures": batch.failures,
        "llm_calls": batch.calls,
        "_warnings": warnings,
    }


def run(ctx: StageContext) -> StageOutput:
    doc = ctx.document
    settings = ctx.settings.relate_episodes
    episodes, entities, relations = ctx.table("episodes"), ctx.table("entities"), ctx.table("relations")
    types = entity_types(entities)
    infos = episode_infos(episodes, types, doc.language)
    vectors = ctx.embedder.embed([i.text for i in infos]) if ctx.embedder is not None and infos else None
    if vectors is not None:
        vectors = np.asarray(vectors, dtype=np.float32)
    candidates = candidate_pairs(
        infos, graph_neighbours(relations), settings.window, settings.max_candidates_per_episode, vectors
    )
    if ctx.llm is not None and candidates:
        output = llm_links(ctx, infos, candidates, entity_names(entities))
    else:
        flashbacks = flashback_episodes(episodes, ctx.table("sections"))
        output = {
            "episode_links": heuristic_links(
                doc.doc_id, infos, candidates, flashbacks, hostile_pairs(relations), settings
            )
        }
    output["episode_links"] = sorted(output["episode_links"], key=lambda r: r["link_id"])
    output["_details"] = {"episodes": len(infos), "candidate_pairs": len(candidates)}
    return output
