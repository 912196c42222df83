"""Dry-run estimates of the downstream stages (judge_continuity, chain_continuity,
track_character_states) from a previous build's rows: the scene graph is rebuilt from its tables
as the stages build it, and each request the stage would send is rendered with the stage's own
item function and counted, message by message.

Character states: the table keeps a scene's last round only. Round r of R is rendered with the
first r/R of the scene's kept states (in table order) as that round's states, and a later round's
notes with those as the previous pass and the stage's default reviewer note.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import pandas as pd

from flows.build.dry_run_rendered import documents, rendered_tokens
from schemas.config import Settings
from tasks.character_states.requests import (
    CRITIC_PROMPT,
    EXTRACT_PROMPT,
    SceneAsk,
    round_values,
    scene_groups,
    scene_key,
)
from tasks.character_states.observable import observable_text
from tasks.character_states.offline import candidates as state_candidates
from tasks.continuity.critic import PROMPT_ID as CHAIN_PROMPT
from tasks.continuity.critic import chain_item
from tasks.continuity.inputs import SCENE_TABLES
from tasks.continuity.judge_requests import PROMPT_ID as JUDGE_PROMPT
from tasks.continuity.judge_requests import judge_requests
from tasks.continuity.scenes import SceneGraph, scene_graph
from tasks.tables.io import as_list

STATE_ROUNDS_PER_SCENE = 1.5  # extract -> critic rounds an LLM takes per scene: an assumption, stated
DEFAULT_REVIEW = "revise for coverage and grounding"  # the stage's note when the critic names no problem
# Tables a downstream estimate reads that a build may leave empty (no occasions, no facts ...).
MAY_BE_EMPTY = (
    "mentions", "occasions", "events", "interactions", "atomic_facts", "continuity_judgments", "raw_units",
)  # fmt: skip


def _graphs(f: dict[str, pd.DataFrame], doc_ids: list[str]) -> dict[str, SceneGraph]:
    graphs = {}
    for doc_id in doc_ids:
        tables = {
            name: f[name][f[name]["doc_id"] == doc_id] if "doc_id" in f[name] else f[name]
            for name in SCENE_TABLES
            if name in f
        }
        graphs[doc_id] = scene_graph(doc_id, tables)
    return graphs


def judge(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """The candidates the stage asks (the closest `max_candidates` per document), grouped into
    requests as the stage groups them."""
    titles = documents(f)
    candidates = f["continuity_candidates"]
    graphs = _graphs(f, sorted(map(str, candidates["doc_id"].unique())))
    calls = prompt = 0
    for doc_id, group in candidates.groupby("doc_id"):
        rows = sorted(
            group.to_dict("records"), key=lambda c: (c["distance"], c["ordinal_a"], c["candidate_id"])
        )[: s.continuity.max_candidates]
        title, language = titles.get(str(doc_id), ("", "en"))
        plan = judge_requests(graphs[str(doc_id)], rows, language, s.continuity)
        calls += len(plan.groups)
        prompt += sum(rendered_tokens(JUDGE_PROMPT, language, plan.values(g, title)) for g in plan.groups)
    return calls, prompt


def chains(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """The previous build's preliminary chains, one critic request each, with their judgments."""
    titles = documents(f)
    frame = f["continuity_chains"]
    preliminary = frame[frame["kind"] == "preliminary"] if len(frame) else frame
    if preliminary.empty:
        return 0, 0
    graphs = _graphs(f, sorted(map(str, preliminary["doc_id"].unique())))
    judgments = f["continuity_judgments"]
    calls = prompt = 0
    for doc_id, group in preliminary.groupby("doc_id"):
        title, language = titles.get(str(doc_id), ("", "en"))
        judged = sorted(
            judgments[judgments["doc_id"] == doc_id].to_dict("records"), key=lambda j: j["judgment_id"]
        )
        for row in group.sort_values("ordinal").itertuples():
            chain = {
                "section_ids": [str(x) for x in as_list(row.section_ids)],
                "shared_entity_ids": [str(x) for x in as_list(row.shared_entity_ids)],
            }
            calls += 1
            prompt += rendered_tokens(
                CHAIN_PROMPT, language, chain_item(graphs[str(doc_id)], title, chain, judged)
            )
    return calls, prompt


def _listing(rows: pd.DataFrame, graph: SceneGraph) -> str:
    return (
        "\n".join(
            f'- {graph.name(r.entity_id)} [{r.state_kind}]: {r.state} ("{r.evidence}")'
            for r in rows.itertuples()
        )
        or "(no grounded states)"
    )


def _asked_in(round_: int, rounds: float, position: int) -> bool:
    """Whether the scene at `position` among those assumed to need `rounds` (maybe fractional)
    rounds is still open in `round_`: a fractional last round takes that share of the scenes,
    spread evenly."""
    if round_ <= math.floor(rounds):
        return True
    share = rounds - math.floor(rounds)
    return round_ == math.floor(rounds) + 1 and math.floor((position + 1) * share) > math.floor(
        position * share
    )


def states(f: dict[str, pd.DataFrame], s: Settings, template: int) -> tuple[int, int]:
    """Per scene with candidate characters: as many extract + critic rounds as the previous LLM
    build's states of that scene went through; over an offline build's states (one pass, no critic)
    or a scene without states, STATE_ROUNDS_PER_SCENE rounds. Each round's open scenes are grouped
    into requests as the stage groups them."""
    titles = documents(f)
    texts = dict(zip(f["documents"]["doc_id"], f["documents"]["text"].fillna("")))
    kept = f["character_states"]
    mentions = f["mentions"]
    settings = s.character_states
    calls = prompt = 0
    for doc_id, graph in _graphs(f, sorted(map(str, kept["doc_id"].unique()))).items():
        title, language = titles.get(doc_id, ("", "en"))
        counts: dict[str, Counter] = defaultdict(Counter)
        in_doc = mentions[mentions["doc_id"] == doc_id] if len(mentions) else mentions
        for section_id, entity_id in zip(in_doc.get("section_id", []), in_doc.get("entity_id", [])):
            counts[section_id][entity_id] += 1
        doc_states = kept[kept["doc_id"] == doc_id]
        text = texts.get(doc_id, "")
        raw = f.get("raw_units")
        # The combined extraction wrote the first round's states when it wrote this document's units.
        has_units = raw is not None and "doc_id" in raw and bool((raw["doc_id"] == doc_id).any())
        stored = s.extract_graph.combined and has_units
        planned = []  # (scene, its characters line, its kept rows, its rounds, its place among assumed)
        assumed = 0
        for scene in graph.scenes:
            characters = state_candidates(graph, scene, counts, settings.max_characters_per_scene)
            shown = observable_text(scene, text, language, characters) if characters else ""
            if shown:
                rows = doc_states[doc_states["section_id"] == scene.section_id]
                if not settings.critic:
                    rounds: float = 1
                elif len(rows) and (rows["method"] == "llm").all():
                    rounds = min(settings.max_rounds, max(1, int(rows["round"].max())))
                else:  # an offline build's states (or none kept): the rounds an LLM needs are assumed
                    rounds = min(settings.max_rounds, STATE_ROUNDS_PER_SCENE)
                planned.append((scene, ", ".join(c.name for c in characters), shown, rows, rounds, assumed))
                assumed += rounds != int(rounds)
        for round_ in range(1, (settings.max_rounds if settings.critic else 1) + 1):
            extract: dict[str, SceneAsk] = {}
            critic: dict[str, SceneAsk] = {}
            for scene, names, shown, rows, rounds, position in planned:
                if not _asked_in(round_, rounds, position):
                    continue
                last = math.ceil(rounds)
                before = _listing(rows.head(-(-len(rows) * (round_ - 1) // last)), graph)
                listing = _listing(rows.head(-(-len(rows) * round_ // last)), graph)
                notes = (
                    "(first pass)" if round_ == 1 else f"Previous pass:\n{before}\nReviewer: {DEFAULT_REVIEW}"
                )
                key = scene.section_id
                place = scene_key(scene.index)
                if round_ > 1 or not stored:  # the combined extraction wrote the first round
                    extract[key] = SceneAsk(key, scene.heading, names, shown, notes, place)
                critic[key] = SceneAsk(key, scene.heading, names, shown, listing, place)
            for asks, is_critic, prompt_id in (
                (extract, False, EXTRACT_PROMPT),
                (critic if settings.critic else {}, True, CRITIC_PROMPT),
            ):
                for ids in scene_groups(list(asks.values()), is_critic, language, settings):
                    calls += 1
                    prompt += rendered_tokens(
                        prompt_id, language, round_values(asks, ids, is_critic, language, title)
                    )
    return calls, prompt
