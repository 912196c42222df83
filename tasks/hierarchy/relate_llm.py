"""LLM episode relations, several candidate pairs per request: pairs in source order (an
episode's pairs are neighbours: candidates come from a window of later episodes), grouped while
the episodes they name fit a token budget, with content-defined boundaries
(tasks.llm.requests.request_groups); each episode of a request is one line (labelled E1, E2, ... in telling
order, see episode_records.episode_line) and each pair is a numbered line "E3 and E5", answered by number.
A pair a reply leaves out is asked again once; still unanswered, it is a failures row."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schemas.config import RelateEpisodesSettings
from tasks.hierarchy.episode_candidates import Candidate, EpisodeInfo
from tasks.hierarchy.episode_records import episode_line
from tasks.hierarchy.text import shorten
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.request_groups import stable_groups
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens


@dataclass(frozen=True)
class RelateRequests:
    """Candidate pairs of one document grouped into requests, each episode line written once."""

    pairs: dict[str, tuple[str, str]]  # "a|b" -> (a, b), a told before b
    lines: dict[str, str]  # episode id -> its line (without the label)
    order: dict[str, int]  # episode id -> telling order
    groups: list[list[str]]

    def values(self, ids: list[str], title: str, language: str) -> dict[str, str]:
        shown = sorted({e for i in ids for e in self.pairs[i]}, key=self.order.__getitem__)
        label = {e: f"E{n}" for n, e in enumerate(shown, 1)}
        joiner = " 与 " if language == "zh" else " and "
        return {
            "document_title": title,
            "episodes": "\n".join(f"{label[e]} {self.lines[e]}" for e in shown),
            "pairs": "\n".join(
                f"{n}. {label[a]}{joiner}{label[b]}" for n, (a, b) in enumerate(map(self.pairs.get, ids), 1)
            ),
        }


def relate_requests(
    episodes: Mapping[str, Any],
    pairs: list[tuple[str, str]],
    names: Mapping[str, str],
    language: str,
    settings: RelateEpisodesSettings,
) -> RelateRequests:
    """`pairs` (in source order, ids of `episodes` rows ordered by `ordinal`) grouped into requests."""
    order = {e: int(r.ordinal) for e, r in episodes.items()}
    keyed = {f"{a}|{b}": (a, b) for a, b in pairs}
    lines = {e: episode_line(episodes[e], names, language) for e in {x for p in pairs for x in p}}
    cost = {e: count_tokens(line) + 2 for e, line in lines.items()}  # + its label
    # In source order (an episode's pairs are neighbours: the window is local), with boundaries keyed
    # by what a pair shows, not by ids, which hash character spans that move with an earlier edit.
    ordered = sorted(keyed.items(), key=lambda item: (order[item[1][0]], order[item[1][1]]))
    items = [(key, f"{lines[a]}\n{lines[b]}", (a, b)) for key, (a, b) in ordered]
    groups = stable_groups(items, cost, settings.pack_tokens, settings.max_pairs_per_request)
    return RelateRequests(keyed, lines, order, groups)


def grouped_links(
    ctx: StageContext,
    infos: list[EpisodeInfo],
    candidates: list[Candidate],
    names: dict[str, str],
    link_row: Any,
) -> StageOutput:
    """`episode_links` rows from grouped requests, plus failures and llm_calls rows."""
    doc = ctx.document
    settings = ctx.settings.relate_episodes
    episodes = {str(r.episode_id): r for r in ctx.table("episodes").itertuples()}
    pairs = [
        (infos[c.a].episode_id, infos[c.b].episode_id) for c in sorted(candidates, key=lambda c: (c.a, c.b))
    ]
    plan = relate_requests(episodes, pairs, names, doc.language, settings)
    batch = run_grouped(
        ctx,
        SHAPES["relate_episodes"],
        plan.groups,
        lambda ids: plan.values(ids, doc.title, doc.language),
    )
    rows = []
    for pair_id, (a_id, b_id) in plan.pairs.items():
        judgment = batch.values.get(pair_id)
        if (
            judgment is None
            or judgment.relation_type == "none"
            or judgment.confidence < settings.min_confidence
        ):
            continue
        source, target = (a_id, b_id) if judgment.direction == "A_to_B" else (b_id, a_id)
        row = (
            judgment.relation_type,
            source,
            target,
            round(judgment.confidence, 4),
            shorten(judgment.reason, 500),
        )
        rows.append(link_row(doc.doc_id, row, "llm"))
    return {"episode_links": rows, "failures": batch.failures, "llm_calls": batch.calls}
