"""Pairwise production-continuity judgments over source-grounded scene packets (paper
appendix D.1). With an LLM, the pairwise prompt over candidates grouped several to a request
(tasks.continuity.judge_requests); offline, a deterministic rule
over the same packets, labelled `offline_rule`: a shared location (grounded in both scenes or
the same heading location), compatible time of day and interior/exterior, object overlap as
extra support, and blockers from changed states of the shared setting or objects."""

from __future__ import annotations

from typing import Any

from schemas.ids import make_id
from schemas.responses.continuity import ContinuityJudgment
from tasks.continuity.judge_requests import judge_requests
from tasks.continuity.scenes import Scene, SceneGraph
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.items import LLMBatch
from tasks.llm.requests.shapes import SHAPES
from tasks.stage import StageContext

LIGHT = {
    "NIGHT": "night",
    "MIDNIGHT": "night",
    "LATE NIGHT": "night",
    "DAY": "day",
    "MORNING": "day",
    "AFTERNOON": "day",
    "NOON": "day",
    "DUSK": "dusk",
    "EVENING": "dusk",
    "SUNSET": "dusk",
    "DAWN": "dawn",
    "SUNRISE": "dawn",
    "夜": "night",
    "日": "day",
    "晨": "dawn",
    "黄昏": "dusk",
    "傍晚": "dusk",
}


def light(scene: Scene) -> str | None:
    """The lighting class of a scene's time of day (None: unknown, CONTINUOUS, LATER ...)."""
    return LIGHT.get(scene.time_of_day.strip().upper())


def _interiors(scene: Scene) -> set[str]:
    return {p for p in scene.interior.upper().replace(".", "").split("/") if p in ("INT", "EXT")}


def rule_judgment(graph: SceneGraph, a: Scene, b: Scene, shared: list[str]) -> dict[str, Any]:
    """The offline decision for one candidate: is_continuity, confidence, support, blockers, reason."""
    grounded = [e for e in shared if e in a.grounded and e in b.grounded]
    locations = [graph.name(e) for e in grounded if graph.kind(e) == "location"]
    if not locations and a.location and a.location.strip().upper() == b.location.strip().upper():
        locations = [a.location.strip()]
    objects = [graph.name(e) for e in grounded if graph.kind(e) == "object"]
    characters = [graph.name(e) for e in grounded if graph.kind(e) == "character"]
    support = [f"both scenes are set at {name}" for name in locations]
    support += [f"{name} appears in both scenes" for name in objects + characters]
    blockers: list[str] = []
    if light(a) and light(b) and light(a) != light(b):
        blockers.append(f"time of day differs: {a.time_of_day} vs {b.time_of_day}")
    if _interiors(a) and _interiors(b) and not _interiors(a) & _interiors(b):
        blockers.append(f"interior/exterior differs: {a.interior} vs {b.interior}")
    setup = {e for e in grounded if graph.kind(e) in ("location", "object")}
    for text, entity_ids in a.changes:
        if entity_ids & setup:
            blockers.append(f"state changes in scene {a.index + 1}: {text}")
    is_continuity = bool(locations) and not blockers
    if is_continuity:
        confidence = min(0.95, 0.6 + 0.1 * len(objects) + 0.05 * len(characters))
        reason = f"shared location {locations[0]} with compatible time of day and no changed setup"
    else:
        confidence = 0.2 if blockers else 0.3
        reason = blockers[0] if blockers else "no shared source-grounded location"
    return {
        "is_continuity": is_continuity,
        "confidence": round(confidence, 3),
        "support": support[:8],
        "blockers": blockers[:8],
        "reason": reason,
    }


def judgment_row(
    doc_id: str, candidate: dict[str, Any], verdict: dict[str, Any], method: str
) -> dict[str, Any]:
    return {
        "judgment_id": make_id("cjudge", doc_id, candidate["candidate_id"]),
        "doc_id": doc_id,
        "candidate_id": candidate["candidate_id"],
        "scene_a": candidate["scene_a"],
        "scene_b": candidate["scene_b"],
        **verdict,
        "method": method,
    }


def offline_judgments(graph: SceneGraph, candidates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_id = graph.by_id
    return [
        judgment_row(
            graph.doc_id,
            c,
            rule_judgment(graph, by_id[c["scene_a"]], by_id[c["scene_b"]], list(c["shared_entity_ids"])),
            "offline_rule",
        )
        for c in candidates
    ]


def llm_judgments(
    ctx: StageContext, graph: SceneGraph, candidates: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], LLMBatch[ContinuityJudgment]]:
    """Several candidates per request (see judge_requests); candidates whose request failed, or
    that a reply left out also when asked again, are in the batch's failures."""
    doc = ctx.document
    plan = judge_requests(graph, candidates, doc.language, ctx.settings.continuity)
    batch = run_grouped(
        ctx,
        SHAPES["judge_continuity"],
        plan.iter_groups(),
        lambda ids: plan.values(ids, doc.title),
    )
    rows = []
    for candidate in candidates:
        reply = batch.values.get(str(candidate["candidate_id"]))
        if reply is not None:
            verdict = {
                "is_continuity": reply.is_continuity,
                "confidence": float(reply.confidence),
                "support": [s.strip() for s in reply.support if s.strip()][:8],
                "blockers": [s.strip() for s in reply.blockers if s.strip()][:8],
                "reason": reply.reason.strip(),
            }
            rows.append(judgment_row(graph.doc_id, candidate, verdict, "llm"))
    return rows, batch
