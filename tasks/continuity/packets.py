"""Scene packets for many pairwise prompts at once: what a scene's packet holds apart from its
evidence (names by type, title, occasions, facts) is built once per scene, and its evidence once
per (scene, grounded surfaces) — the same strings `scenes.packet` builds for one call. The judge
renders thousands of candidate pairs over a few hundred scenes with it."""

from __future__ import annotations

from tasks.continuity.scenes import MAX_EVIDENCE_CHARS, Scene, SceneGraph, packet


class PacketCache:
    def __init__(self, graph: SceneGraph) -> None:
        self.graph = graph
        self.by_id = graph.by_id
        self._fixed: dict[str, dict[str, str]] = {}
        self._lines: dict[str, tuple[list[str], list[str]]] = {}
        self._evidence: dict[tuple[str, frozenset[str]], str] = {}

    def evidence(self, scene: Scene, entity_ids: list[str]) -> str:
        """`scenes.evidence_lines(scene, entity_ids, graph)`, with the scene's lines split once."""
        surfaces = frozenset(scene.grounded[e][0].lower() for e in entity_ids if e in scene.grounded)
        key = (scene.section_id, surfaces)
        found = self._evidence.get(key)
        if found is None:
            if scene.section_id not in self._lines:
                lines = [line.strip() for line in scene.text.splitlines() if line.strip()]
                self._lines[scene.section_id] = (lines, [line.lower() for line in lines])
            lines, lowered = self._lines[scene.section_id]
            picked = [
                line for line, low in zip(lines, lowered) if any(s and s in low for s in surfaces)
            ] or lines[:4]
            found = self._evidence[key] = "\n".join(picked)[:MAX_EVIDENCE_CHARS]
        return found

    def packet(self, scene: Scene, shared: list[str]) -> dict[str, str]:
        """`scenes.packet(scene, graph, shared)`."""
        fixed = self._fixed.get(scene.section_id)
        if fixed is None:
            fixed = self._fixed[scene.section_id] = packet(scene, self.graph, [])
        return {**fixed, "evidence": self.evidence(scene, shared) or "-"}
