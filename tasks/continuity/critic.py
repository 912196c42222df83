"""The chain-critic prompt (paper appendix D.1): one request per preliminary chain with its
scenes' packets (labelled S1, S2, ... in script order) and its pairwise edge decisions; the
reply's labels are resolved back to scene ids (unknown labels are dropped)."""

from __future__ import annotations

from typing import Any

from schemas.responses.continuity import ChainCritique
from tasks.continuity.scenes import SceneGraph, packet
from tasks.llm.requests.items import LLMBatch, run_structured
from tasks.stage import StageContext

PROMPT_ID = "critique_chain/v1"
MAX_SCENES_SHOWN = 24
MAX_EDGES_SHOWN = 60
MAX_PACKET_EVIDENCE = 300


def chain_item(
    scenes: SceneGraph, title: str, chain: dict[str, Any], judgments: list[dict[str, Any]]
) -> dict[str, str]:
    """Prompt values for one chain: ordered labels, per-scene packets and the pairwise decisions."""
    labels = {s: f"S{i}" for i, s in enumerate(chain["section_ids"], 1)}
    by_id = scenes.by_id
    shared = list(chain["shared_entity_ids"])
    packets = []
    for section_id in chain["section_ids"][:MAX_SCENES_SHOWN]:
        p = packet(by_id[section_id], scenes, shared)
        packets.append(
            f"[{labels[section_id]}] {p['title']}\n  characters: {p['characters']}\n"
            f"  locations: {p['locations']}\n  objects: {p['objects']}\n"
            f"  evidence: {' / '.join(p['evidence'].splitlines())[:MAX_PACKET_EVIDENCE]}"
        )
    if len(chain["section_ids"]) > MAX_SCENES_SHOWN:
        packets.append(f"(... {len(chain['section_ids']) - MAX_SCENES_SHOWN} more scenes)")
    place = {s: i for i, s in enumerate(chain["section_ids"])}
    # In the chain's scene order, not the judgments' (their ids hash spans that move with an edit).
    inside = sorted(
        (j for j in judgments if j["scene_a"] in place and j["scene_b"] in place),
        key=lambda j: (place[j["scene_a"]], place[j["scene_b"]]),
    )
    edges = [
        f"{labels[j['scene_a']]}-{labels[j['scene_b']]}: "
        f"{'continuity' if j['is_continuity'] else 'no continuity'} "
        f"({float(j['confidence']):.2f}) {j['reason']}"
        for j in inside
    ][:MAX_EDGES_SHOWN]
    return {
        "document_title": title,
        "scenes": ", ".join(
            f"{labels[s]} = {by_id[s].heading}" for s in chain["section_ids"][:MAX_SCENES_SHOWN]
        ),
        "packets": "\n".join(packets),
        "edges": "\n".join(edges) or "-",
    }


def resolve(critique: ChainCritique, section_ids: list[str]) -> dict[str, Any]:
    """The reply with scene labels turned into scene ids."""
    ids = {f"S{i}": s for i, s in enumerate(section_ids, 1)}

    def scene(label: str) -> str | None:
        return ids.get(label.strip().upper())

    weak = [(scene(pair[0]), scene(pair[1])) for pair in critique.weak_edges if len(pair) == 2]
    splits = [[s for s in map(scene, group) if s] for group in critique.suggested_splits]
    return {
        "coherence_score": float(critique.coherence_score),
        "confidence": float(critique.confidence),
        "decision": critique.decision,
        "weak_edges": [(a, b) for a, b in weak if a and b and a != b],
        "suggested_splits": [g for g in splits if g],
        "rationale": critique.rationale.strip(),
    }


def llm_critiques(
    ctx: StageContext, scenes: SceneGraph, chains: list[dict[str, Any]], judgments: list[dict[str, Any]]
) -> tuple[dict[str, dict[str, Any]], LLMBatch[ChainCritique]]:
    """chain id -> resolved critique, for the chains whose request succeeded."""
    items = [(c["chain_id"], chain_item(scenes, ctx.document.title, c, judgments)) for c in chains]
    batch = run_structured(ctx, PROMPT_ID, items, ChainCritique)
    by_id = {c["chain_id"]: c for c in chains}
    return {
        chain_id: resolve(reply, by_id[chain_id]["section_ids"]) for chain_id, reply in batch.values.items()
    }, batch
