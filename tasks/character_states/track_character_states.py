"""Stage track_character_states (paper appendix D.2): observable per-scene states of the
characters the scene-entity graph places in each scene. Offline, states are spans of the
scene's action lines, parentheticals and cues (tasks.character_states.offline); with an LLM,
the extract -> critic -> revise loop (tasks.character_states.llm), whose first extraction the
combined extraction has already written (`[extract_graph] combined`, the default: read from
raw_units, tasks.character_states.stored)."""

from __future__ import annotations

from collections import Counter, defaultdict

from tasks.character_states.llm import llm_states
from tasks.character_states.offline import candidates, offline_states
from tasks.character_states.stored import stored_states
from tasks.continuity.scenes import scene_graph
from tasks.stage import StageContext, StageOutput

SCENE_TABLES = ("sections", "entities", "mentions", "occasions")


def run(ctx: StageContext) -> StageOutput:
    settings = ctx.settings.character_states
    graph = scene_graph(ctx.doc_id, {name: ctx.tables[name] for name in SCENE_TABLES if name in ctx.tables})
    mentions: dict[str, Counter] = defaultdict(Counter)
    frame = ctx.table("mentions")
    for section_id, entity_id in zip(frame["section_id"], frame["entity_id"]) if len(frame) else ():
        mentions[section_id][entity_id] += 1
    document = ctx.document
    if ctx.llm is None:
        rows = offline_states(
            graph,
            document.text,
            document.language,
            mentions,
            settings.max_characters_per_scene,
            settings.max_states_per_character,
        )
        return {"character_states": sorted(rows, key=lambda r: (r["char_start"], r["state_id"]))}
    plan = [
        (scene, chosen)
        for scene in graph.scenes
        if (chosen := candidates(graph, scene, mentions, settings.max_characters_per_scene))
    ]
    first, unread = None, []
    if ctx.settings.extract_graph.combined:  # the extraction wrote the first round's states
        first, unread = stored_states(ctx.table("raw_units"), ctx.table("chunks"), ctx.doc_id, ctx.stage)
    produced = llm_states(
        ctx,
        graph,
        plan,
        settings.max_rounds if settings.critic else 1,
        settings.max_states_per_character,
        critic=settings.critic,
        first=first,
    )
    produced["failures"] = unread + produced["failures"]
    output: StageOutput = {
        "character_states": sorted(
            produced["character_states"], key=lambda r: (r["char_start"], r["state_id"])
        ),
        "llm_calls": produced["llm_calls"],
        "failures": produced["failures"],
    }
    if produced["failures"]:
        output["_warnings"] = [f"{len(produced['failures'])} state requests failed in the LLM; see failures"]
    return output
