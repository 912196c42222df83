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
        self._line_hits: dict[tuple[str, str], tuple[int, ...]] = {}

    def evidence(self, scene: Scene, entity_ids: list[str]) -> str:
        """`scenes.evidence_lines(scene, entity_ids, graph)`, with the scene's lines split once."""
        surfaces = frozenset(scene.grounded[e][0].lower() for e in entity_ids if e in scene.grounded)
        key = (scene.section_id, surfaces)
        found = self._evidence.get(key)
        if found is None:
            lines = self._scene_lines(scene)[0]
            hits = sorted({k for s in surfaces if s for k in self._hits(scene, s)})
            picked = [lines[k] for k in hits] or lines[:4]
            found = self._evidence[key] = "\n".join(picked)[:MAX_EVIDENCE_CHARS]
        return found

    def _scene_lines(self, scene: Scene) -> tuple[list[str], list[str]]:
        """The scene's non-blank lines, stripped, and the same lowercased."""
        found = self._lines.get(scene.section_id)
        if found is None:
            lines = [line.strip() for line in scene.text.splitlines() if line.strip()]
            found = self._lines[scene.section_id] = (lines, [line.lower() for line in lines])
        return found

    def _hits(self, scene: Scene, surface: str) -> tuple[int, ...]:
        """Positions of the scene's lines holding `surface` (lowercased)."""
        key = (scene.section_id, surface)
        found = self._line_hits.get(key)
        if found is None:
            lowered = self._scene_lines(scene)[1]
            found = self._line_hits[key] = tuple(k for k, low in enumerate(lowered) if surface in low)
        return found

    def packet(self, scene: Scene, shared: list[str]) -> dict[str, str]:
        """`scenes.packet(scene, graph, shared)`."""
        fixed = self._fixed.get(scene.section_id)
        if fixed is None:
            fixed = self._fixed[scene.section_id] = packet(scene, self.graph, [])
        return {**fixed, "evidence": self.evidence(scene, shared) or "-"}
