"""LLM character states (paper appendix D.2): per scene, extract -> critic -> revise rounds
until the critic accepts or `max_rounds` is reached. Every round is one batch over the scenes
still open, several scenes per request (tasks.character_states.requests), each shown by the lines
where its characters are seen or heard (tasks.character_states.observable). A state must name a
candidate character and quote the scene (else it is dropped);
a scene's rows are the states of its last round, with that round and whether it was accepted.
A failed request ends its scene with a `failures` row (and the previous round's states)."""

from __future__ import annotations

from typing import Any

from schemas.ids import make_id
from schemas.responses.continuity import StatesReply
from tasks.character_states.observable import observable_text
from tasks.character_states.offline import Character
from tasks.character_states.requests import SceneAsk, round_values, scene_groups, scene_key
from tasks.continuity.scenes import Scene, SceneGraph
from tasks.llm.requests.grouped import GroupedBatch, run_grouped
from tasks.llm.requests.shapes import SHAPES
from tasks.narrative.inputs import locate_quote
from tasks.stage import StageContext

METHOD = "llm"


def _resolve(name: str, characters: list[Character]) -> str | None:
    key = name.strip().lower()
    for character in characters:
        if key in {s.lower() for s in character.surfaces}:
            return character.entity_id
    return None


def _rows(
    graph: SceneGraph,
    scene: Scene,
    characters: list[Character],
    reply: StatesReply,
    round_: int,
    per_character: int,
) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    counts: dict[str, int] = {}
    for item in reply.states:
        entity_id = _resolve(item.character, characters)
        found = locate_quote(scene.text, item.evidence) if entity_id else None
        if entity_id is None or found is None or counts.get(entity_id, 0) >= per_character:
            continue
        start, end = scene.char_start + found[0], scene.char_start + found[1]
        state_id = make_id(
            "cstate", graph.doc_id, scene.section_id, entity_id, start, end, item.state.strip()
        )
        counts[entity_id] = counts.get(entity_id, 0) + 1
        rows[state_id] = {
            "state_id": state_id,
            "doc_id": graph.doc_id,
            "section_id": scene.section_id,
            "entity_id": entity_id,
            "state": item.state.strip(),
            "state_kind": item.kind,
            "evidence": scene.text[found[0] : found[1]],
            "char_start": start,
            "char_end": end,
            "round": round_,
            "accepted": False,
            "method": METHOD,
        }
    return list(rows.values())


def _listing(rows: list[dict[str, Any]], graph: SceneGraph) -> str:
    return (
        "\n".join(
            f'- {graph.name(r["entity_id"])} [{r["state_kind"]}]: {r["state"]} ("{r["evidence"]}")'
            for r in rows
        )
        or "(no grounded states)"
    )


def _ask(ctx: StageContext, asks: dict[str, SceneAsk], critic: bool) -> GroupedBatch[Any]:
    """One round's extract (or critic) requests, several scenes per request."""
    language, title = ctx.document.language, ctx.document.title
    groups = scene_groups(list(asks.values()), critic, language, ctx.settings.character_states)
    return run_grouped(
        ctx,
        SHAPES["character_states_critic" if critic else "character_states"],
        groups,
        lambda ids: round_values(asks, ids, critic, language, title),
    )


def llm_states(
    ctx: StageContext,
    graph: SceneGraph,
    plan: list[tuple[Scene, list[Character]]],
    max_rounds: int,
    per_character: int,
    critic: bool = True,
    first: dict[str, StatesReply] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """States, llm_calls and failures of the planned scenes. Without the critic, one extraction
    round and no review: the critic reads every scene a second time, which on a small model costs
    about as much as the extraction, for a label when no revision round is left. `first`: the first
    round's replies by section id, already written by the combined extraction (not asked again; a
    scene it has nothing for has no states in that round)."""
    document = ctx.document
    # What each request shows of a scene: the lines where its characters are seen or heard. A scene
    # showing none of them is not asked.
    shown = {
        scene.section_id: observable_text(scene, document.text, document.language, characters)
        for scene, characters in plan
    }
    open_scenes = {
        scene.section_id: (scene, characters) for scene, characters in plan if shown[scene.section_id]
    }
    feedback: dict[str, str] = {s: "(first pass)" for s in open_scenes}
    last: dict[str, list[dict[str, Any]]] = {}
    done: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    failures: list[dict[str, str]] = []
    for round_ in range(1, max_rounds + 1):
        if not open_scenes:
            break
        asks = {
            f"{section_id}#extract{round_}": SceneAsk(
                f"{section_id}#extract{round_}",
                scene.heading,
                ", ".join(c.name for c in characters),
                shown[section_id],
                feedback[section_id],
                scene_key(scene.index),
            )
            for section_id, (scene, characters) in open_scenes.items()
        }
        if round_ == 1 and first is not None:
            extracted: GroupedBatch[Any] = GroupedBatch(
                values={i: first.get(i.rsplit("#", 1)[0]) or StatesReply(states=[]) for i in asks}
            )
        else:
            extracted = _ask(ctx, asks, critic=False)
        calls.extend(extracted.calls)
        failures.extend(extracted.failures)
        judged: dict[str, SceneAsk] = {}
        for section_id, (scene, characters) in list(open_scenes.items()):
            reply = extracted.values.get(f"{section_id}#extract{round_}")
            if reply is None:
                done.extend(last.get(section_id, []))
                del open_scenes[section_id]
                continue
            last[section_id] = _rows(graph, scene, characters, reply, round_, per_character)
            if not critic:
                done.extend({**row, "accepted": False} for row in last[section_id])
                del open_scenes[section_id]
                continue
            judged[f"{section_id}#critic{round_}"] = SceneAsk(
                f"{section_id}#critic{round_}",
                scene.heading,
                ", ".join(c.name for c in characters),
                shown[section_id],
                _listing(last[section_id], graph),
                scene_key(scene.index),
            )
        if not judged:
            continue
        critiques = _ask(ctx, judged, critic=True)
        calls.extend(critiques.calls)
        failures.extend(critiques.failures)
        for section_id in list(open_scenes):
            critique = critiques.values.get(f"{section_id}#critic{round_}")
            if critique is None or critique.accept or round_ == max_rounds:
                accepted = bool(critique is not None and critique.accept)
                done.extend({**row, "accepted": accepted} for row in last[section_id])
                del open_scenes[section_id]
            else:
                feedback[section_id] = (
                    "Previous pass:\n"
                    + _listing(last[section_id], graph)
                    + "\nReviewer: "
                    + ("; ".join(critique.problems) or "revise for coverage and grounding")
                )
    return {"character_states": done, "llm_calls": calls, "failures": failures}
