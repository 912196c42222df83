"""judge_continuity's candidate pairs as grouped requests (prompt v2): pairs are ordered so that
pairs naming the same scenes are neighbours and grouped while the scene packets they name (and
their own shared-evidence lines) fit a token budget; each scene's packet is written once per
request, headed by its number in the script ("[scene 12]"), and each pair is a numbered block
"n. scene 3 and scene 12" followed by the canonical evidence the two scenes share.

A scene's packet shows the lines that mention any entity it shares with another asked scene
(the same packet whichever pairs it is asked with), clipped as the pairwise packet is."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from schemas.config import ContinuitySettings
from tasks.continuity.scenes import SceneGraph, packet
from tasks.llm.grouped import group_by_shared, order_by_shared
from tasks.tables.io import as_list
from tasks.text import count_tokens

PROMPT_ID = "judge_continuity/v2"
LABELS = {
    "en": (
        "and",
        "Evidence",
        "Characters",
        "Locations",
        "Objects",
        "Occasions",
        "Events, interactions and facts",
    ),
    "zh": ("与", "证据", "人物", "地点", "物件", "场合", "事件、互动与事实"),
}


def scene_label(index: int, language: str) -> str:
    """The scene's number in the script: "scene 12" (en) or "第12场" (zh)."""
    return f"第{index + 1}场" if language == "zh" else f"scene {index + 1}"


def shared_lines(graph: SceneGraph, candidate: dict[str, Any], language: str) -> str:
    """The canonical evidence a pair shares: one line per entity, its surface in each scene."""
    by_id = graph.by_id
    scenes = (by_id[candidate["scene_a"]], by_id[candidate["scene_b"]])
    via = "经由场合" if language == "zh" else "via occasion"
    lines = []
    for entity_id in as_list(candidate["shared_entity_ids"]):
        where = [
            f'{scene_label(s.index, language)}: "{s.grounded[entity_id][0]}"'
            if entity_id in s.grounded
            else f"{scene_label(s.index, language)}: {via}"
            for s in scenes
        ]
        lines.append(f"- {graph.name(entity_id)} ({graph.kind(entity_id)}): {'; '.join(where)}")
    return "\n".join(lines) or "-"


def scene_block(graph: SceneGraph, section_id: str, shared: list[str], language: str) -> str:
    """One scene's packet under its label."""
    scene = graph.by_id[section_id]
    p = packet(scene, graph, shared)
    zh = language == "zh"
    _, evidence, characters, locations, objects, occasions, facts = LABELS["zh" if zh else "en"]
    colon = "：" if zh else ": "
    return (
        f"[{scene_label(scene.index, language)}] {p['title']}\n{evidence}{colon.strip()}\n{p['evidence']}\n"
        f"{characters}{colon}{p['characters']}\n{locations}{colon}{p['locations']}\n"
        f"{objects}{colon}{p['objects']}\n{occasions}{colon}{p['occasions']}\n{facts}{colon}{p['facts']}"
    )


@dataclass(frozen=True)
class JudgeRequests:
    """Candidate pairs of one document grouped into requests, each scene packet written once."""

    candidates: dict[str, dict[str, Any]]  # candidate id -> candidate row
    packets: dict[str, str]  # section id -> its labelled packet
    shared: dict[str, str]  # candidate id -> its shared-evidence lines
    order: dict[str, int]  # section id -> script position
    labels: dict[str, str]  # section id -> "scene 12"
    joiner: str
    groups: list[list[str]]

    def values(self, ids: list[str], title: str) -> dict[str, str]:
        asked = [self.candidates[i] for i in ids]
        shown = sorted({s for c in asked for s in (c["scene_a"], c["scene_b"])}, key=self.order.__getitem__)
        pairs = [
            f"{n}. {self.labels[c['scene_a']]} {self.joiner} {self.labels[c['scene_b']]}\n"
            f"{self.shared[c['candidate_id']]}"
            for n, c in enumerate(asked, 1)
        ]
        return {
            "document_title": title,
            "scenes": "\n\n".join(self.packets[s] for s in shown),
            "pairs": "\n\n".join(pairs),
        }


def judge_requests(
    graph: SceneGraph, candidates: list[dict[str, Any]], language: str, settings: ContinuitySettings
) -> JudgeRequests:
    """`candidates` (the asked ones, closest first) grouped into requests."""
    by_id = {str(c["candidate_id"]): c for c in candidates}
    sharing: dict[str, list[str]] = {}
    for c in candidates:
        for side in ("scene_a", "scene_b"):
            known = sharing.setdefault(c[side], [])
            known.extend(e for e in as_list(c["shared_entity_ids"]) if e not in known)
    packets = {s: scene_block(graph, s, shared, language) for s, shared in sharing.items()}
    shared = {i: shared_lines(graph, c, language) for i, c in by_id.items()}
    cost = {s: count_tokens(text) for s, text in packets.items()}
    cost.update({f"pair:{i}": count_tokens(text) + 6 for i, text in shared.items()})  # + its number line
    parts = [(i, (c["scene_a"], c["scene_b"], f"pair:{i}")) for i, c in by_id.items()]
    groups = group_by_shared(
        order_by_shared(parts), cost, settings.pack_tokens, settings.max_candidates_per_request
    )
    scenes = graph.by_id
    return JudgeRequests(
        by_id,
        packets,
        shared,
        {s: scenes[s].index for s in sharing},
        {s: scene_label(scenes[s].index, language) for s in sharing},
        LABELS["zh" if language == "zh" else "en"][0],
        groups,
    )
