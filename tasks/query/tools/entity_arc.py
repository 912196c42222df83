"""Entity arcs: the scenes where the characters a question names appear together, in story order.

"How does Clay's working relationship with John Myers evolve from their initial interaction
through the rooftop mission?" has its answer in two places: where the two first meet, and the
rooftop scene. Passage retrieval over the whole question finds scenes that use its words, mostly
the busiest scenes of both names; the entity graph knows where both are mentioned, so the arc picks,
among the scenes the two share, the first (or last) two where the question points at its start (end)
and the one that best tells each moment it describes. Two, because the first scene naming both is
often a mention before they meet: on the STAGE corpus's arc questions the first shared scene was
the gold start for 40 of 90, one of the first two for 51.
"""

from __future__ import annotations

import re

from tasks.query.tools.env import ToolEnv
from tasks.query.tools.episode_walk import passage_scores
from tasks.query.tools.types import ToolRow, provenance

# "from <start> to / through <end>": the two moments of an arc.
ARC_SPAN = re.compile(
    r"\bfrom\s+(.+?)\s+(?:to|through|into|until|up to|across)\s+(.+?)\s*(?:[?.!]|$)", re.IGNORECASE
)
ZH_ARC_SPAN = re.compile(r"从(.+?)(?:到|至|直到)(.+?)(?:[，,？?。]|$)")
FIRST = re.compile(
    r"\b(?:first|initial|earl(?:y|ier|iest)|opening|beginning|start|outset)\b|最初|初次|第一次|开始|起初|开篇|早期|初见|初遇"
)
LAST = re.compile(r"\b(?:final|last|end(?:ing)?|climax|conclusion|closing)\b|最终|最后|结尾|结局|末尾")
# A bracketed scene heading the question names ("[138, EXT. ROBERTA'S BROWNSTONE - DAY]").
BRACKETED = re.compile(r"\[[^\[\]]*\]")
EDGE_SCENES = 2  # shared scenes taken at a start or an end the question points at
ARC_ROWS = 6


def arc_points(question: str) -> list[str]:
    """The moments an arc question runs between ("their initial interaction", "the rooftop
    mission sequence"), in the question's order; none when it names no span.

    A moment ends at its first comma ("the river confrontation, based on their coordinated
    actions"; "From X to Y, how did …"), except inside a bracketed scene heading ("[138, EXT.
    ROBERTA'S BROWNSTONE - DAY]"), which is one moment whatever it holds."""
    headings = BRACKETED.findall(question)
    masked = BRACKETED.sub(lambda m: f"\x00{headings.index(m.group(0))}\x00", question)
    match = ARC_SPAN.search(masked) or ZH_ARC_SPAN.search(masked)
    if match is None:
        return []
    points = []
    for part in match.groups():
        point = re.split(r"[,，]", part or "", maxsplit=1)[0]
        point = re.sub(r"\x00(\d+)\x00", lambda m: headings[int(m.group(1))], point).strip(" ,，")
        if point:
            points.append(point)
    return points


def shared_sections(env: ToolEnv, entity_ids: list[str]) -> list[str]:
    """The sections where every one of `entity_ids` is mentioned, in story order."""
    wanted = set(entity_ids)
    if not wanted:
        return []
    mentioned = env.store.entities_of_section
    order = [r["section_id"] for r in env.store.source.section_rows if r["section_kind"] != "preamble"]
    return [s for s in order if wanted <= mentioned.get(s, frozenset())]


def _best_section(sections: list[str], of_section: dict[str, list[str]], scores: dict[str, float]) -> str:
    """The section holding the chunk that best matches, earliest on ties."""
    return max(sections, key=lambda s: max((scores.get(c, 0.0) for c in of_section.get(s, [])), default=0.0))


def entity_arc_search(
    env: ToolEnv, entity_ids: list[str], query: str, top_k: int = ARC_ROWS
) -> list[ToolRow]:
    """Scenes two characters (or one) share, in story order, for how a relationship or a character changes.

    The first (last) two shared scenes where the question points at its start (end), and the shared
    scene that best tells each moment it describes; one row per scene."""
    known = [e for e in dict.fromkeys(entity_ids) if e in env.store.entities_by_id][:2]
    sections = shared_sections(env, known)
    if not sections:
        return []
    of_section = env.store.source.chunk_ids_of_section
    picked: list[tuple[str, str, str]] = []  # (section, role, moment)
    points = arc_points(query)
    for point in points:
        if FIRST.search(point.lower()):
            picked += [(s, "first", point) for s in sections[:EDGE_SCENES]]
        elif LAST.search(point.lower()):
            picked += [(s, "last", point) for s in sections[-EDGE_SCENES:][::-1]]
        # Also the shared scene that best tells the moment ("their initial confrontation").
        scores = passage_scores(env, point, env.vector(point))
        picked.append((_best_section(sections, of_section, scores), "moment", point))
    if not points:
        picked += [(sections[0], "first", ""), (sections[-1], "last", "")]
    question_scores = passage_scores(env, query, env.vector(query))
    names = " and ".join(str(env.store.entities_by_id[e]["name"]) for e in known)
    rows: list[ToolRow] = []
    for section_id, role, moment in picked:
        if any(row.section_id == section_id for row in rows):
            continue
        chunk_ids = of_section.get(section_id, [])
        if not chunk_ids:
            continue
        chunk_id = max(chunk_ids, key=lambda c: question_scores.get(c, 0.0))
        place = provenance(env.store, [chunk_id], section_id)
        rows.append(
            ToolRow(
                "section",
                section_id,
                f"{place['heading'] or section_id}: {names} ({role} of {len(sections)} shared scenes)",
                round(question_scores.get(chunk_id, 0.0), 6),
                "graph",
                env.store.doc_id,
                **place,
                entity_ids=tuple(known),
                extra={"arc": role, "moment": moment, "shared_scenes": len(sections)},
            )
        )
    return rows[:top_k]
