"""judge_continuity's candidate pairs as grouped requests (prompt v2): pairs in script order of
their first scene, then of their second (so the pairs of a scene are neighbours), grouped while
the scene packets they name (and their own shared-evidence lines) fit a token budget, with
content-defined boundaries (tasks.llm.requests.request_groups: a group also ends after a pair whose two scene
numbers hash under a threshold), so an edited scene re-asks the requests that show it and no
others; each scene's packet is written once per request, headed by its number in the script
("[scene 12]"), and each pair is a numbered block "n. scene 3 and scene 12" followed by the
canonical evidence the two scenes share.

A scene's packet shows the lines that mention any entity it shares with another asked scene
(the same packet whichever pairs it is asked with), clipped as the pairwise packet is."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Iterator

from schemas.config import ContinuitySettings
from tasks.continuity.scenes import SceneGraph, packet
from tasks.llm.requests.request_groups import iter_stable_groups
from tasks.llm.requests.shapes import SHAPES
from tasks.tables.io import as_list
from tasks.text import count_tokens

PROMPT_ID = SHAPES["judge_continuity"].prompt_id
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


class JudgeRequests:
    """Candidate pairs of one document grouped into requests, each scene packet written once.

    Packets and shared-evidence lines are rendered when a group first needs them (their token
    counts decide the groups), so the stage's first request goes out after the packets of its
    first group, not after every packet of the document."""

    def __init__(
        self, graph: SceneGraph, candidates: list[dict[str, Any]], language: str, settings: ContinuitySettings
    ) -> None:
        self.graph, self.language, self.settings = graph, language, settings
        self.candidates = {str(c["candidate_id"]): c for c in candidates}  # candidate id -> its row
        self._sharing: dict[str, list[str]] = {}  # section id -> entities it shares with asked scenes
        for c in candidates:
            for side in ("scene_a", "scene_b"):
                known = self._sharing.setdefault(c[side], [])
                known.extend(e for e in as_list(c["shared_entity_ids"]) if e not in known)
        scenes = graph.by_id
        self.order = {s: scenes[s].index for s in self._sharing}  # section id -> script position
        self.labels = {s: scene_label(scenes[s].index, language) for s in self._sharing}
        self.joiner = LABELS["zh" if language == "zh" else "en"][0]
        self._packets: dict[str, str] = {}
        self._shared: dict[str, str] = {}
        # A pair's place and its boundary key are its two scene numbers: they stay put when a
        # scene is edited, where ids (which hash character spans) do not.
        self._parts = sorted(
            (
                (self.order[c["scene_a"]], self.order[c["scene_b"]]),
                i,
                (c["scene_a"], c["scene_b"], f"pair:{i}"),
            )
            for i, c in self.candidates.items()
        )

    def packet(self, section_id: str) -> str:
        """The scene's labelled packet (rendered once)."""
        if section_id not in self._packets:
            self._packets[section_id] = scene_block(
                self.graph, section_id, self._sharing[section_id], self.language
            )
        return self._packets[section_id]

    def shared(self, candidate_id: str) -> str:
        """The pair's shared-evidence lines (rendered once)."""
        if candidate_id not in self._shared:
            self._shared[candidate_id] = shared_lines(
                self.graph, self.candidates[candidate_id], self.language
            )
        return self._shared[candidate_id]

    def cost(self, part: str) -> int:
        if part.startswith("pair:"):
            return count_tokens(self.shared(part[len("pair:") :])) + 6  # + its number line
        return count_tokens(self.packet(part))

    def iter_groups(self) -> Iterator[list[str]]:
        """The groups as they are formed (what the stage sends)."""
        return iter_stable_groups(
            ((i, f"{a}:{b}", parts) for (a, b), i, parts in self._parts),
            self.cost,
            self.settings.pack_tokens,
            self.settings.max_candidates_per_request,
        )

    @cached_property
    def groups(self) -> list[list[str]]:
        """Every group (what the dry run counts)."""
        return list(self.iter_groups())

    def values(self, ids: list[str], title: str) -> dict[str, str]:
        asked = [self.candidates[i] for i in ids]
        shown = sorted({s for c in asked for s in (c["scene_a"], c["scene_b"])}, key=self.order.__getitem__)
        pairs = [
            f"{n}. {self.labels[c['scene_a']]} {self.joiner} {self.labels[c['scene_b']]}\n"
            f"{self.shared(str(c['candidate_id']))}"
            for n, c in enumerate(asked, 1)
        ]
        return {
            "document_title": title,
            "scenes": "\n\n".join(self.packet(s) for s in shown),
            "pairs": "\n\n".join(pairs),
        }


def judge_requests(
    graph: SceneGraph, candidates: list[dict[str, Any]], language: str, settings: ContinuitySettings
) -> JudgeRequests:
    """`candidates` (the asked ones, closest first) grouped into requests."""
    return JudgeRequests(graph, candidates, language, settings)
