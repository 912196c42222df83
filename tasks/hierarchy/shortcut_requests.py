"""break_cycles' shortcut questions as grouped requests: questions in story order of the episodes
they name, grouped while those episodes fit a token budget, with content-defined boundaries keyed
by what each question shows (tasks.llm.requests.request_groups), so a question that changes re-asks its own
group, not every later one;
each episode of a request is one line (labelled E1, E2, ... in first-named order, see
episode_records.episode_line; its span, summary and goal: whether a path carries an edge is told
by what the episodes say, not by who is in them) and each question a numbered line
"E1 -[causes]-> E3; path: E1 -[precedes]-> E2 -[causes]-> E3"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from schemas.config import BreakCyclesSettings
from tasks.hierarchy.episode_records import episode_line
from tasks.hierarchy.saber_model import ShortcutQuestion
from tasks.llm.requests.request_groups import stable_groups
from tasks.text import count_tokens

SUMMARY_WORDS = {"en": 30, "zh": 60}


def _path(q: ShortcutQuestion) -> tuple[str, ...]:
    return (q.edge.source, *q.indirect_path, q.edge.target)


@dataclass(frozen=True)
class ShortcutRequests:
    questions: dict[str, ShortcutQuestion]  # relation id -> its question
    lines: dict[str, str]  # episode id -> its line (without the label)
    groups: list[list[str]]

    def values(self, ids: list[str], title: str) -> dict[str, str]:
        asked = [self.questions[i] for i in ids]
        shown = list(dict.fromkeys(e for q in asked for e in _path(q)))
        label = {eid: f"E{n}" for n, eid in enumerate(shown, 1)}
        lines = []
        for n, q in enumerate(asked, 1):
            hops = [label[q.indirect_path[0]]] if q.indirect_path else []
            for k, step in enumerate(q.indirect_path[1:]):
                kind = q.path_edges[k].relation_type if k < len(q.path_edges) else "?"
                hops.append(f"-[{kind}]-> {label[step]}")
            direct = f"{label[q.edge.source]} -[{q.edge.relation_type}]-> {label[q.edge.target]}"
            lines.append(f"{n}. {direct}; path: {' '.join(hops)}")
        return {
            "document_title": title,
            "episodes": "\n".join(f"{label[e]} {self.lines.get(e, e)}" for e in shown),
            "questions": "\n".join(lines),
        }


def shortcut_requests(
    questions: list[ShortcutQuestion],
    episodes: Mapping[str, Any],
    language: str,
    settings: BreakCyclesSettings,
) -> ShortcutRequests:
    """Questions (about distinct edges) grouped into requests; `episodes` maps ids to rows."""
    by_relation = {q.edge.relation_id: q for q in questions}
    named = {e for q in questions for e in _path(q)}
    words = SUMMARY_WORDS["zh" if language == "zh" else "en"]
    lines = {
        e: episode_line(episodes[e], {}, language, words, participants=False) for e in named if e in episodes
    }
    cost = {e: count_tokens(line) + 2 for e, line in lines.items()}  # + its label
    place = {e: _place(episodes[e]) for e in named if e in episodes}
    ordered = sorted(by_relation.items(), key=lambda item: [place.get(e, (0, 0)) for e in _path(item[1])])
    items = [(rid, _content_key(q, lines), _path(q)) for rid, q in ordered]
    groups = stable_groups(items, cost, settings.pack_tokens, settings.max_per_request)
    return ShortcutRequests(by_relation, lines, groups)


def _place(row: Any) -> tuple[int, int]:
    """An episode's place in the story: its first section, then its order among episodes."""
    return int(row.first_ordinal), int(row.ordinal)


def _content_key(q: ShortcutQuestion, lines: Mapping[str, str]) -> str:
    """What a question asks, as the prompt shows it: its episodes' lines and the relation types
    (ids hash character spans, which move when an earlier scene is edited)."""
    kinds = [q.edge.relation_type, *(e.relation_type for e in q.path_edges)]
    return "\n".join([*(lines.get(e, "") for e in _path(q)), *kinds])
