"""Scenes of one document as the continuity and state stages see them: which canonical
characters, locations and objects each scene grounds (a mention span inside the scene) or
links through an occasion, and a source-grounded packet per scene for the judges."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import pandas as pd

from tasks.llm.requests.records import first_words
from tasks.tables.io import as_list

SETUP_TYPES = ("character", "location", "object")
CUE_ORDER = ("location", "object", "character")  # a chain's cues: the set first, then props, then cast
MAX_EVIDENCE_CHARS = 700
MAX_FACTS = 6
MAX_OCCASION_WORDS = 12


@dataclass
class Scene:
    section_id: str
    index: int  # position among the document's scenes, in script order
    ordinal: int
    heading: str
    location: str
    time_of_day: str
    interior: str
    char_start: int
    text: str
    # entity id -> first grounded mention in this scene: (surface, absolute char_start, char_end)
    grounded: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    surfaces: dict[str, set[str]] = field(
        default_factory=dict
    )  # entity -> every mention surface in the scene
    via_occasion: dict[str, list[str]] = field(
        default_factory=lambda: defaultdict(list)
    )  # entity -> occasion ids
    facts: list[str] = field(default_factory=list)
    changes: list[tuple[str, set[str]]] = field(
        default_factory=list
    )  # state-change events: (text, entity ids)

    @property
    def linked(self) -> set[str]:
        """Entities grounded in the scene or linked to it by an occasion."""
        return set(self.grounded) | set(self.via_occasion)


@dataclass
class SceneGraph:
    doc_id: str
    scenes: list[Scene]
    entities: dict[str, dict[str, Any]]  # entity id -> row (setup types only)
    occasions: dict[str, str] = field(default_factory=dict)  # occasion id -> its description

    @cached_property
    def by_id(self) -> dict[str, Scene]:
        # Built once: the judges look scenes up for every candidate pair.
        return {s.section_id: s for s in self.scenes}

    def name(self, entity_id: str) -> str:
        return str(self.entities.get(entity_id, {}).get("name", entity_id))

    def kind(self, entity_id: str) -> str:
        return str(self.entities.get(entity_id, {}).get("entity_type", ""))


def _str(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def scene_graph(doc_id: str, tables: dict[str, pd.DataFrame]) -> SceneGraph:
    """The scene-entity graph from sections, entities, mentions, occasions and narrative units."""
    sections = tables["sections"].sort_values("ordinal")
    chosen = sections[sections["section_kind"] == "scene"]
    if chosen.empty:
        chosen = sections[sections["section_kind"] != "preamble"]
    scenes = [
        Scene(
            r["section_id"],
            i,
            int(r["ordinal"]),
            _str(r["heading"]),
            _str(r["location"]),
            _str(r["time_of_day"]),
            _str(r["interior"]),
            int(r["char_start"]),
            _str(r["text"]),
        )
        for i, r in enumerate(chosen.to_dict("records"))
    ]
    by_id = {s.section_id: s for s in scenes}
    entities_frame = tables["entities"]
    entities = {
        r["entity_id"]: r
        for r in entities_frame.to_dict("records")
        if r["entity_type"] in SETUP_TYPES and not r.get("is_proxy")
    }
    mentions = tables["mentions"]
    if len(mentions):
        ordered = mentions.sort_values(["section_id", "char_start", "mention_id"])
        columns = ("section_id", "entity_id", "surface", "char_start", "char_end")
        for section_id, entity_id, surface, start, end in zip(*(ordered[c].tolist() for c in columns)):
            scene = by_id.get(section_id)
            if scene is None or entity_id not in entities:
                continue
            scene.surfaces.setdefault(entity_id, set()).add(str(surface))
            if entity_id not in scene.grounded:
                scene.grounded[entity_id] = (str(surface), int(start), int(end))
    occasions = tables.get("occasions")
    described: dict[str, str] = {}
    if occasions is not None and len(occasions):
        for o in occasions.sort_values("occasion_id").to_dict("records"):
            described[o["occasion_id"]] = " ".join(_str(o.get("description")).split())
            linked = [e for e in [o.get("setting_id"), *as_list(o.get("participant_ids"))] if e in entities]
            for section_id in as_list(o.get("section_ids")):
                scene = by_id.get(section_id)
                for entity_id in linked if scene is not None else ():
                    scene.via_occasion[entity_id].append(o["occasion_id"])
    _attach_facts(by_id, tables)
    return SceneGraph(doc_id, scenes, entities, described)


def _attach_facts(by_id: dict[str, Scene], tables: dict[str, pd.DataFrame]) -> None:
    """Short event, interaction and fact descriptions per scene, in source order."""
    for name, column in (
        ("events", "description"),
        ("interactions", "description"),
        ("atomic_facts", "text"),
    ):
        frame = tables.get(name)
        if frame is None or frame.empty:
            continue
        for row in frame.sort_values(["section_id", "char_start"]).itertuples(index=False):
            scene = by_id.get(row.section_id)
            if scene is not None and len(scene.facts) < MAX_FACTS * 3:
                text = " ".join(str(getattr(row, column)).split())[:160]
                if text not in scene.facts:
                    scene.facts.append(text)
                if name == "events" and row.event_type == "state_change":
                    scene.changes.append((text, set(as_list(row.participant_ids)) | {row.setting_id}))


def evidence_lines(scene: Scene, entity_ids: list[str], graph: SceneGraph) -> str:
    """The scene's lines that mention the given entities (else its opening), clipped."""
    surfaces = {scene.grounded[e][0].lower() for e in entity_ids if e in scene.grounded}
    lines = [line.strip() for line in scene.text.splitlines() if line.strip()]
    picked = [line for line in lines if any(s and s in line.lower() for s in surfaces)] or lines[:4]
    return "\n".join(picked)[:MAX_EVIDENCE_CHARS]


def occasion_names(scene: Scene, graph: SceneGraph) -> list[str]:
    """The descriptions of the occasions linked to the scene, shortened (an id would
    tell a model nothing, and ids hash spans that move when an earlier scene is edited), sorted."""
    ids = {o for ids in scene.via_occasion.values() for o in ids}
    return sorted({first_words(graph.occasions.get(o) or "", MAX_OCCASION_WORDS) for o in ids} - {""})


def packet(scene: Scene, graph: SceneGraph, shared: list[str]) -> dict[str, str]:
    """One scene's source-grounded packet: title and its number in the script (no character offsets:
    they move with every edit before the scene, and the prompt would change with them), evidence,
    entities by type, occasions, facts."""
    names: dict[str, list[str]] = {t: [] for t in SETUP_TYPES}
    for entity_id in sorted(scene.linked, key=graph.name):
        names[graph.kind(entity_id)].append(
            graph.name(entity_id) + ("" if entity_id in scene.grounded else " (occasion)")
        )
    return {
        "title": f"{scene.heading} (scene {scene.index + 1})",
        "evidence": evidence_lines(scene, shared, graph) or "-",
        "characters": ", ".join(names["character"]) or "-",
        "locations": ", ".join(names["location"]) or "-",
        "objects": ", ".join(names["object"]) or "-",
        "occasions": "; ".join(occasion_names(scene, graph)[:6]) or "-",
        "facts": "; ".join(scene.facts[:MAX_FACTS]) or "-",
    }


def shared_cues(graph: SceneGraph, section_ids: list[str]) -> tuple[list[str], list[dict[str, Any]]]:
    """Entities grounded in every one of the scenes, and their spans per scene (the chain's cues)."""
    scenes = [graph.by_id[s] for s in section_ids]
    common = set(scenes[0].grounded)
    for scene in scenes[1:]:
        common &= set(scene.grounded)
    ordered = sorted(common, key=lambda e: (CUE_ORDER.index(graph.kind(e)), graph.name(e), e))
    cues = [
        {
            "entity_id": e,
            "name": graph.name(e),
            "type": graph.kind(e),
            "spans": [
                {
                    "section_id": s.section_id,
                    "surface": s.grounded[e][0],
                    "char_start": s.grounded[e][1],
                    "char_end": s.grounded[e][2],
                }
                for s in scenes
            ],
        }
        for e in ordered
    ]
    return ordered, cues
