"""Dry-run estimates that render a stage's own requests from a previous build's rows (the same
grouping and the same prompt text the stage sends) and count their prompt tokens: used for the
stages whose requests are built from tables alone (canonicalize_entities, assemble_episodes,
relate_episodes, break_cycles, induce_storylines)."""

from __future__ import annotations

from typing import Any

import pandas as pd

from schemas.config import Settings
from tasks.canonicalize.records import merge_requests
from tasks.hierarchy.episode_llm import episode_block, group_blocks, renumbered
from tasks.hierarchy.induce_storylines import document_inputs
from tasks.hierarchy.relate_llm import relate_requests
from tasks.hierarchy.saber_model import EpisodeEdge, ShortcutQuestion
from tasks.hierarchy.shortcut_requests import shortcut_requests
from tasks.hierarchy.storyline_relations import StorylineInfo
from tasks.hierarchy.storyline_requests import storyline_requests
from tasks.hierarchy.units import entity_names, load_units
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.llm.requests.shapes import SHAPES
from tasks.tables.io import as_list
from tasks.text import count_tokens


def rendered_tokens(prompt_id: str, language: str, values: dict[str, Any]) -> int:
    """Prompt tokens of one request as the stage sends it (every message counted)."""
    messages = render_messages(load_prompt(prompt_id, language), values)
    return sum(count_tokens(m["content"]) for m in messages)


def documents(f: dict[str, pd.DataFrame]) -> dict[str, tuple[str, str]]:
    """doc id -> (title, language) of the documents in the frames."""
    return {str(r.doc_id): (str(r.title), str(r.language)) for r in f["documents"].itertuples()}


def canonicalize(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """The open pairs (decided `rule:no_evidence` offline, `llm` by an LLM build) as merge requests."""
    decisions = f["merge_decisions"]
    asked = decisions[decisions["method"].isin(["rule:no_evidence", "llm"])]
    titles = documents(f)
    calls = prompt = 0
    for doc_id, group in asked.groupby("doc_id"):
        undecided = [(str(r.left), str(r.right), float(r.score)) for r in group.itertuples()]
        in_doc = _in_doc(f, doc_id)
        raw = (in_doc["raw_entities"], in_doc["raw_mentions"], in_doc["chunks"])
        plan = merge_requests(undecided, *raw, s.canonicalize_entities)
        title, language = titles.get(str(doc_id), ("", "en"))
        calls += len(plan.groups)
        prompt_id = SHAPES["canonicalize_entities"].prompt_id
        prompt += sum(
            rendered_tokens(prompt_id, language, plan.values(ids, title, language)) for ids in plan.groups
        )
    return calls, prompt


def _in_doc(f: dict[str, pd.DataFrame], doc_id: Any) -> dict[str, pd.DataFrame]:
    return {
        name: frame[frame["doc_id"] == doc_id] if "doc_id" in frame else frame for name, frame in f.items()
    }


def assemble(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """Each episode's units (rebuilt from the unit tables as the stage loads them) as description requests."""
    titles = documents(f)
    calls = prompt = 0
    for doc_id, episodes in f["episodes"].sort_values("ordinal").groupby("doc_id"):
        d = _in_doc(f, doc_id)
        title, language = titles.get(str(doc_id), ("", "en"))
        units = {
            u.unit_id: u
            for u in load_units(d["sections"], d["entities"], d["events"], d["interactions"], d["occasions"])
        }
        names = entity_names(d["entities"])
        blocks = {}
        for row in episodes.itertuples():
            members = [units[u] for u in as_list(row.unit_ids) if u in units]
            if members:
                people = [names.get(p, p) for p in as_list(row.participant_ids)]
                blocks[str(row.episode_id)] = episode_block(0, members, people, language)
        a = s.assemble_episodes
        for group in group_blocks(blocks, a.pack_tokens, a.max_per_request):
            values = {
                "document_title": title,
                "episodes": "\n\n".join(renumbered(blocks[e], n) for n, e in enumerate(group, 1)),
            }
            calls += 1
            prompt += rendered_tokens(SHAPES["assemble_episodes"].prompt_id, language, values)
    return calls, prompt


def candidate_like(ids: list[str], details: dict[str, Any] | None, window: int) -> list[tuple[str, str]]:
    """Pairs shaped like a previous build's candidates: as many pairs of each gap (positions
    apart in telling order) as its manifest counts, spread evenly over the document; without
    gaps, the pairs within `window` thinned to the counted number; without a count, all of them."""
    gaps = (details or {}).get("candidate_gaps")
    if gaps:
        pairs = []
        for gap, count in sorted((int(g), int(n)) for g, n in gaps.items()):
            anchors = list(range(len(ids) - gap))
            chosen = (
                [anchors[round(k * len(anchors) / count)] for k in range(count)]
                if count < len(anchors)
                else anchors
            )
            pairs.extend((ids[a], ids[a + gap]) for a in chosen)
        return sorted(pairs, key=lambda p: (ids.index(p[0]), ids.index(p[1])))
    pairs = [(a, b) for position, a in enumerate(ids) for b in ids[position + 1 : position + 1 + window]]
    wanted = (details or {}).get("candidate_pairs")
    if wanted is not None and 0 < int(wanted) < len(pairs):
        pairs = [pairs[round(k * len(pairs) / int(wanted))] for k in range(int(wanted))]
    return pairs


def relate(
    f: dict[str, pd.DataFrame], s: Settings, template: int, known: dict[str, dict[str, Any]] | None = None
) -> tuple[int, int]:
    """Candidate-like pairs (see `candidate_like`; `known`: doc id -> the relate stage's manifest
    details of a previous build) as relate requests."""
    r = s.relate_episodes
    titles = documents(f)
    calls = prompt = 0
    for doc_id, episodes in f["episodes"].sort_values("ordinal").groupby("doc_id"):
        ids = [str(e) for e in episodes["episode_id"]]
        pairs = candidate_like(
            ids, (known or {}).get(str(doc_id)), min(r.window, r.max_candidates_per_episode)
        )
        title, language = titles.get(str(doc_id), ("", "en"))
        rows = {str(row.episode_id): row for row in episodes.itertuples()}
        plan = relate_requests(rows, pairs, entity_names(_in_doc(f, doc_id)["entities"]), language, r)
        calls += len(plan.groups)
        prompt_id = SHAPES["relate_episodes"].prompt_id
        prompt += sum(
            rendered_tokens(prompt_id, language, plan.values(g, title, language)) for g in plan.groups
        )
    return calls, prompt


def break_cycles(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """The shortcut questions a previous build adjudicated (rules `llm_*`: asked the LLM, or
    the heuristic standing in for it offline) as break_cycles requests."""
    actions = f["saber_actions"]
    asked = actions[actions["rule"].astype(str).str.startswith("llm_")]
    relations = f["episode_relations"]
    kind = {str(r.relation_id): str(r.relation_type) for r in relations.itertuples()}
    hop = {
        (str(r.source_episode_id), str(r.target_episode_id)): str(r.relation_type)
        for r in relations.itertuples()
    }
    titles = documents(f)
    calls = prompt = 0
    for doc_id, group in asked.groupby("doc_id"):
        questions: dict[str, ShortcutQuestion] = {}
        for row in group.itertuples():
            path = tuple(str(e) for e in as_list(row.indirect_path))
            edge = EpisodeEdge(
                str(row.relation_id),
                str(row.source_episode_id),
                str(row.target_episode_id),
                kind.get(str(row.relation_id), "precedes"),
                1.0,
            )
            steps = tuple(EpisodeEdge("", a, b, hop.get((a, b), "?"), 1.0) for a, b in zip(path, path[1:]))
            questions.setdefault(edge.relation_id, ShortcutQuestion(edge, path, steps))
        b = s.break_cycles
        chosen = list(questions.values())[: b.max_adjudications]
        title, language = titles.get(str(doc_id), ("", "en"))
        episodes = {str(r.episode_id): r for r in _in_doc(f, doc_id)["episodes"].itertuples()}
        plan = shortcut_requests(chosen, episodes, language, b)
        calls += len(plan.groups)
        prompt_id = SHAPES["break_cycles"].prompt_id
        prompt += sum(rendered_tokens(prompt_id, language, plan.values(g, title)) for g in plan.groups)
    return calls, prompt


def induce(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """A previous build's storylines (and the signals linking them) as storyline requests."""
    titles = documents(f)
    calls = prompt = 0
    for doc_id, storylines in f["storylines"].sort_values("ordinal").groupby("doc_id"):
        d = _in_doc(f, doc_id)
        title, language = titles.get(str(doc_id), ("", "en"))
        inputs = document_inputs(d["episodes"], d["entities"], d["episode_relations"], language)
        infos = [
            StorylineInfo(
                str(r.storyline_id),
                f"S{int(r.ordinal)}",
                tuple(e for e in map(str, as_list(r.episode_ids)) if e in inputs.episodes),
                int(r.first_ordinal),
                int(r.last_ordinal),
                frozenset().union(
                    *(inputs.characters.get(str(e), frozenset()) for e in as_list(r.episode_ids))
                ),
                "",
            )
            for r in storylines.itertuples()
        ]
        infos = [i for i in infos if i.episode_ids]
        plan = storyline_requests(
            infos,
            inputs.episodes,
            inputs.participants,
            inputs.names,
            inputs.types,
            inputs.graph,
            language,
            s.induce_storylines,
        )
        calls += len(plan.groups)
        prompt_id = SHAPES["induce_storylines"].prompt_id
        prompt += sum(
            rendered_tokens(prompt_id, language, plan.values(g, title, language)) for g in plan.groups
        )
    return calls, prompt
