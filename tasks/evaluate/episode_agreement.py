"""How close a document's episodes are to a reference episode layer: which scenes each episode
spans, where episodes break, which episodes are related, and how names match.

Pure: takes our episodes and relations (section ids) and the reference's, already mapped to our
section ids. Used to measure the episode layer against STAGE's released episodes; the product
never reads a reference.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from tasks.evaluate.metrics import rouge_l_f1


@dataclass(frozen=True)
class EpisodeSpan:
    """One episode as the scenes it covers, with its name and description."""

    episode_id: str
    section_ids: frozenset[str]
    name: str
    description: str = ""


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 0.0


def best_matches(reference: list[EpisodeSpan], ours: list[EpisodeSpan]) -> dict[str, tuple[str, float]]:
    """Reference episode id -> (our episode with the highest scene Jaccard, that Jaccard); ties go to
    our smaller episode, then to the earlier id (a tighter span is the closer reading)."""
    by_section: dict[str, list[EpisodeSpan]] = {}
    for episode in ours:
        for section_id in episode.section_ids:
            by_section.setdefault(section_id, []).append(episode)
    matches: dict[str, tuple[str, float]] = {}
    for ref in reference:
        candidates = {e.episode_id: e for s in ref.section_ids for e in by_section.get(s, [])}
        if not candidates:
            matches[ref.episode_id] = ("", 0.0)
            continue
        best = max(
            candidates.values(),
            key=lambda e: (jaccard(ref.section_ids, e.section_ids), -len(e.section_ids), e.episode_id),
        )
        matches[ref.episode_id] = (best.episode_id, jaccard(ref.section_ids, best.section_ids))
    return matches


def same_episode_pairs(episodes: Iterable[EpisodeSpan], order: list[str]) -> set[tuple[str, str]]:
    """Adjacent scene pairs (in story order) that one episode spans both of."""
    together: set[tuple[str, str]] = set()
    spans = [e.section_ids for e in episodes]
    for left, right in zip(order, order[1:]):
        if any(left in span and right in span for span in spans):
            together.add((left, right))
    return together


def boundary_f1(reference: list[EpisodeSpan], ours: list[EpisodeSpan], order: list[str]) -> float:
    """F1 of episode boundaries between adjacent scenes (a boundary: no episode spans both)."""
    pairs = set(zip(order, order[1:]))
    ref_breaks = pairs - same_episode_pairs(reference, order)
    our_breaks = pairs - same_episode_pairs(ours, order)
    if not ref_breaks and not our_breaks:
        return 1.0
    hits = len(ref_breaks & our_breaks)
    precision = hits / len(our_breaks) if our_breaks else 0.0
    recall = hits / len(ref_breaks) if ref_breaks else 0.0
    return 2 * precision * recall / (precision + recall) if precision + recall else 0.0


def relation_recall(
    reference_pairs: Iterable[tuple[str, str]],
    our_pairs: Iterable[tuple[str, str]],
    matches: dict[str, tuple[str, float]],
) -> dict[str, float]:
    """Share of reference relations whose ends map to two of our episodes linked by a relation
    (either direction), to one episode (both ends inside it), or to nothing related."""
    linked = {frozenset(p) for p in our_pairs}
    counts = {"linked": 0, "same_episode": 0, "missing": 0}
    total = 0
    for subject, obj in reference_pairs:
        a, b = matches.get(subject, ("", 0.0))[0], matches.get(obj, ("", 0.0))[0]
        if not a or not b:
            continue
        total += 1
        if a == b:
            counts["same_episode"] += 1
        elif frozenset((a, b)) in linked:
            counts["linked"] += 1
        else:
            counts["missing"] += 1
    return {k: v / total for k, v in counts.items()} | {"n": float(total)} if total else {"n": 0.0}


def document_agreement(
    reference: list[EpisodeSpan],
    ours: list[EpisodeSpan],
    order: list[str],
    reference_pairs: list[tuple[str, str]],
    our_pairs: list[tuple[str, str]],
) -> dict[str, float]:
    """Every agreement figure of one document."""
    matches = best_matches(reference, ours)
    by_id = {e.episode_id: e for e in ours}
    mapped = [r for r in reference if r.section_ids]
    spans = [matches[r.episode_id][1] for r in mapped]
    reverse = best_matches(ours, mapped)
    names = [
        rouge_l_f1(by_id[matches[r.episode_id][0]].name, r.name) for r in mapped if matches[r.episode_id][0]
    ]
    texts = [
        rouge_l_f1(by_id[matches[r.episode_id][0]].description, r.description)
        for r in mapped
        if matches[r.episode_id][0] and r.description
    ]
    relations = relation_recall(reference_pairs, our_pairs, matches)
    return {
        "reference_episodes": float(len(mapped)),
        "our_episodes": float(len(ours)),
        "reference_scenes_per_episode": _mean(len(r.section_ids) for r in mapped),
        "our_scenes_per_episode": _mean(len(e.section_ids) for e in ours),
        "span_jaccard": _mean(spans),
        "span_jaccard_ours": _mean(score for _, score in reverse.values()),
        "boundary_f1": boundary_f1(mapped, ours, order),
        "name_rouge_l": _mean(names),
        "description_rouge_l": _mean(texts),
        "relations_linked": relations.get("linked", 0.0),
        "relations_same_episode": relations.get("same_episode", 0.0),
        "relations_missing": relations.get("missing", 0.0),
        "reference_relations": relations["n"],
    }


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
