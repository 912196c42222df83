"""Offline query planning: decompose a question into intents (entities named, question form,
temporal and causal cues) and choose follow-up tool calls by rule. With an LLM, the agent
loop (tasks.query.agent_loop) makes these choices instead."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from tasks.query.question_clauses import QuestionShape, read_shape
from tasks.query.question_form import QuestionForm, read_question
from tasks.query.question_scope import QuestionScope, read_scope
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.episode_walk import WALK_ROWS
from tasks.query.tools.graph import find_entities_in_text
from tasks.query.tools.registry import ToolCall

SPEECH = (
    r"\b(say|says|said|tell|tells|told|ask|asks|asked|reply|replies|replied|"
    r"call|calls|called|shout|whisper|mention)\w*|说|问|告诉|喊"
)
PLACE = (
    r"\b(where|scene|room|place|location|house|office|street|car|kitchen|bedroom|airport|hotel)\b"
    r"|哪里|在哪|场景"
)
STATE = (
    r"\b(feel|feels|felt|think|thinks|thought|believe|want|wants|wanted|know|knows|knew|"
    r"afraid|angry|happy|sad|relationship|attitude|react)\w*|感到|觉得|想|关系"
)


WALKED_SHAPES = ("progression", "order", "cause")


@dataclass
class QueryIntents:
    question: str
    form: QuestionForm
    entity_ids: list[str]
    needs: set[str] = field(default_factory=set)  # order, cause, dialogue, place, state, pair, literal
    answer_slot: str = ""  # what the answer must name (from the LLM reading; empty offline)
    reader: str = "offline"  # who read the question: offline rules, or the LLM on top of them
    shape: QuestionShape | None = None  # the events it describes and what it asks of them
    scope: QuestionScope | None = None  # whole work, a character, a theme ... or local

    def describe(self) -> dict[str, Any]:
        described = {
            "wh": self.form.wh,
            "temporal": list(self.form.temporal),
            "causal": self.form.is_causal,
            "entities": self.entity_ids,
            "needs": sorted(self.needs),
            "reader": self.reader,
        }
        if self.shape is not None and self.shape.kind != "local":
            described["shape"] = self.shape.kind
        if self.scope is not None and self.scope.is_global:
            described["scope"] = self.scope.kind
        return {**described, "answer_slot": self.answer_slot} if self.answer_slot else described


def decompose(env: ToolEnv, question: str, options: list[str] | None = None) -> QueryIntents:
    """Intents read from the question: named entities, form and cues."""
    form = read_question(question, options)
    lowered = question.lower()
    entity_ids = find_entities_in_text(env, question) if env.store.has_graph else []
    needs: set[str] = set()
    if form.temporal or form.wh == "when":
        needs.add("order")
    if form.is_causal or form.wh in ("why", "how"):
        needs.add("cause")
    if re.search(SPEECH, lowered):
        needs.add("dialogue")
    if re.search(PLACE, lowered) or form.wh == "where":
        needs.add("place")
    if re.search(STATE, lowered):
        needs.add("state")
    characters = [e for e in entity_ids if env.store.entities_by_id[e]["entity_type"] == "character"]
    if len(characters) >= 2:
        needs.add("pair")
    shape = read_shape(question)
    if shape.kind in ("progression", "order"):
        needs.add("order")
    if shape.kind in ("progression", "cause"):
        needs.add("cause")
    if form.wh in ("who", "what", "which", "where") and not needs & {"order", "cause"}:
        needs.add("literal")
    return QueryIntents(question, form, entity_ids, needs, shape=shape, scope=read_scope(question))


def _direction(form: QuestionForm) -> str:
    if "before" in form.temporal or "first" in form.temporal:
        return "before"
    if "after" in form.temporal or "last" in form.temporal:
        return "after"
    if "change" in form.temporal:
        return "trajectory"
    return "cause" if form.is_causal else "any"


def _characters(env: ToolEnv, intents: QueryIntents) -> list[str]:
    return [e for e in intents.entity_ids if env.store.entities_by_id[e]["entity_type"] == "character"]


def shape_calls(env: ToolEnv, intents: QueryIntents) -> list[tuple[str, dict[str, Any]]]:
    """The structure's calls the question's shape asks for, whoever plans the round: the episode
    walk for a progression, order or cause question, the entity arc for an arc question naming a
    character. The walk reaches scenes whose words the question does not use, so no plan of
    searches by the question's words stands in for it."""
    q = intents.question
    calls: list[tuple[str, dict[str, Any]]] = []
    if intents.shape is not None and intents.shape.kind in WALKED_SHAPES:
        # Which episodes the described events sit in, and the one before / after them.
        calls.append(("episode_walk_search", {"query": q, "top_k": WALK_ROWS}))
    characters = _characters(env, intents)
    if intents.shape is not None and intents.shape.kind == "arc" and characters:
        # Where the named characters share scenes: the first one and the moments the question names.
        calls.append(("entity_arc_search", {"entity_ids": characters[:2], "query": q}))
    return calls


def follow_up_plan(
    env: ToolEnv,
    intents: QueryIntents,
    round_number: int,
    previous: list[ToolCall],
    allowed: set[str],
    max_calls: int,
) -> list[tuple[str, dict[str, Any]]]:
    """Rule-chosen tool calls for one follow-up round (offline stand-in for the LLM's choice)."""
    q = intents.question
    plan: list[tuple[str, dict[str, Any]]] = []
    characters = _characters(env, intents)
    if round_number == 1:
        plan.extend(shape_calls(env, intents))
        if intents.needs & {"order", "cause"}:
            plan.append(
                ("narrative_trace_search", {"query": q, "direction": _direction(intents.form), "top_k": 6})
            )
        # "pair" may come from the LLM's reading while fewer than two characters were found.
        if "pair" in intents.needs and len(characters) >= 2:
            plan.append(
                (
                    "narrative_sql_search",
                    {
                        "query_name": "interactions_between",
                        "entity_id": characters[0],
                        "other_entity_id": characters[1],
                        "limit": 8,
                    },
                )
            )
        if "dialogue" in intents.needs and characters:
            plan.append(
                (
                    "narrative_sql_search",
                    {"query_name": "dialogue_by_speaker", "entity_id": characters[0], "limit": 12},
                )
            )
        if "place" in intents.needs:
            plan.append(("section_search", {"query": q, "top_k": 3}))
        plan.append(("vdb_search_sentences", {"query": q, "top_k": 8}))
        plan.append(("bm25_search_docs", {"query": q, "top_k": 4}))
    elif round_number == 2:
        # Expand around the entities the first rounds surfaced most that the question did not name.
        counts: dict[str, int] = {}
        for call in previous:
            for row in call.rows:
                for entity_id in row.entity_ids:
                    if entity_id not in intents.entity_ids and entity_id in env.store.entities_by_id:
                        counts[entity_id] = counts.get(entity_id, 0) + 1
        for entity_id, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:2]:
            plan.append(("entity_lookup", {"entity_id": entity_id, "query": q}))
        if "state" in intents.needs and characters:
            plan.append(("atomic_fact_search", {"query": q, "entity_ids": characters[:2], "top_k": 6}))
    return [(tool, args) for tool, args in plan if tool in allowed][:max_calls]


def is_answerable(
    intents: QueryIntents, support: dict[str, tuple[float, list[str]]], round_number: int
) -> bool:
    """Fail-closed early stop: a first-pass packet whose best source is backed by several tools
    and the question needs no ordering or causal chain is left alone."""
    if not support or intents.needs & {"order", "cause", "pair"}:
        return False
    best = max(score for score, _ in support.values())
    backers = max(len(set(sources)) for _, sources in support.values())
    return round_number >= 1 and best >= 2.0 and backers >= 3
