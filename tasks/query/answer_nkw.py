"""The NKW query pipeline (paper §3.3, appendix A.2): decomposition, the forced first pass,
candidate assembly, follow-up rounds, the evidence board, reading skills and the answer.

The planner, skill selector and finalizer are injected: offline rules by default, the LLM
agent when a client is configured. Every tool call becomes a trace row.
"""

from __future__ import annotations

import time
from typing import Any, Callable

from schemas.config import AnswerSettings, RetrievalSettings
from tasks.query.answer_global import KIND as SUMMARY_KIND
from tasks.query.answer_global import GlobalWriter, global_answer
from tasks.query.answer_types import Answer, Citation, EvidenceText
from tasks.query.evidence.board import (
    TEXT_KINDS,
    BoardBudget,
    EvidenceBoard,
    allocate,
    attach_facts,
    chunk_support,
    score_items,
)
from tasks.query.evidence.fill import fill_budget, window_candidates
from tasks.query.evidence.passages import (
    ENTITY_ARC,
    add_adjacent_scenes,
    lift_walked,
    pin_sections,
    select_passages,
)
from tasks.query.plan import QueryIntents, decompose, follow_up_plan, is_answerable
from tasks.query.question_scope import answer_words
from tasks.query.reader.finalize import FinalAnswer, Finalizer
from tasks.query.reader.offline import offline_finalizer
from tasks.query.scene_reference import named_sections
from tasks.query.skills.cards import select_skills_offline
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.registry import GRAPH_TOOLS, TOOLS, ToolCall, call_tool

HIERARCHY_KINDS = ["event", "interaction", "occasion", "episode", "storyline"]


# A planner returns the next round's calls (arguments as a dict, or the model's raw JSON
# string for call_tool to validate), [] to stop, or None when the packet is answerable.
Planner = Callable[
    [ToolEnv, QueryIntents, int, list[ToolCall], set[str], int, EvidenceBoard],
    list[tuple[str, dict[str, Any] | str]] | None,
]
SkillSelector = Callable[[str, list[str] | None, QueryIntents, EvidenceBoard], list[str]]


def offline_planner(
    env: ToolEnv,
    intents: QueryIntents,
    round_number: int,
    calls: list[ToolCall],
    allowed: set[str],
    max_calls: int,
    board: EvidenceBoard,
) -> list[tuple[str, dict]] | None:
    """Rule-based follow-ups; None when the packet is already answerable (no tool calls)."""
    support = {p.chunk_id: (p.support, p.supported_by) for p in board.passages}
    if is_answerable(intents, support, round_number):
        return None
    return follow_up_plan(env, intents, round_number, calls, allowed, max_calls)


def allowed_tools(settings: AnswerSettings) -> set[str]:
    allowed = set(TOOLS)
    if not settings.graph_tools:
        allowed -= GRAPH_TOOLS
    return allowed


def _forced_first_pass(
    env: ToolEnv, question: str, intents: QueryIntents, allowed: set[str], settings: AnswerSettings
) -> list[ToolCall]:
    calls: list[ToolCall] = []
    kinds = HIERARCHY_KINDS if settings.hierarchy else ["event", "interaction", "occasion"]
    if "entity_search" in allowed:
        calls.append(call_tool(env, "entity_search", {"query": question, "top_k": 6}, 0, allowed))
    found = list(dict.fromkeys(intents.entity_ids + [r.item_id for r in (calls[-1].rows if calls else [])]))[
        :3
    ]
    if "entity_lookup" in allowed:
        for entity_id in found:
            calls.append(
                call_tool(env, "entity_lookup", {"entity_id": entity_id, "query": question}, 0, allowed)
            )
    if "relation_search" in allowed:
        arguments: dict[str, Any] = {"query": question, "top_k": 8}
        if found:
            arguments["entity_ids"] = found
        calls.append(call_tool(env, "relation_search", arguments, 0, allowed))
    calls.append(call_tool(env, "atomic_fact_search", {"query": question, "top_k": 8}, 0, allowed))
    calls.append(
        call_tool(
            env, "narrative_semantic_search", {"query": question, "kinds": kinds, "top_k": 8}, 0, allowed
        )
    )
    return calls


def build_board(
    env: ToolEnv,
    question: str,
    intents: QueryIntents,
    calls: list[ToolCall],
    settings: AnswerSettings,
    budget_tokens: int,
    text_rows: list,
    named: list[str] | None = None,
) -> EvidenceBoard:
    """Score, cluster and allocate the structured items, then choose source passages under the budget;
    a scene the question names (`named` section ids) always gives a passage."""
    rows = [row for call in calls for row in call.rows]
    text_hits = [row for row in text_rows + [r for r in rows if r.kind in TEXT_KINDS]]
    text_chunks: dict[str, float] = {}
    for rank, row in enumerate(text_hits):
        for chunk_id in row.source_chunk_ids[:1]:
            text_chunks[chunk_id] = max(text_chunks.get(chunk_id, 0.0), 1.0 / (1 + rank))
    budget = BoardBudget(
        settings.entity_items,
        settings.narrative_items,
        settings.relation_items,
        settings.entity_floor,
        settings.narrative_floor,
        settings.facts_per_entity,
    )
    fact_rows = [r for r in rows if r.kind == "fact"]
    items = score_items([r for r in rows if r.kind != "fact"], question, text_chunks, set(intents.entity_ids))
    if not any(item.channel == "entity" for item in items):
        # No entity matched: standalone facts take the entity slots instead of being attached.
        items += score_items(fact_rows, question, text_chunks, set(intents.entity_ids))
    board = allocate(items, budget)
    attach_facts(board["entity"], fact_rows, budget.facts_per_entity)
    support = chunk_support(board, text_hits)
    if named:
        of_section = env.store.source.chunk_ids_of_section
        support = pin_sections(support, named, of_section, _chunk_bm25(env, question))
    directions = [d for d in ("before", "after") if d in intents.form.temporal]
    if directions and env.store.source.kind == "screenplay":
        of_section = env.store.source.chunk_ids_of_section
        order = _scene_order(env)
        support = add_adjacent_scenes(support, directions, _section_of_chunk(env), order, of_section)
    walked = [r.chunk_id for r in rows if r.extra.get("walk") and r.chunk_id]
    support = lift_walked(support, walked)
    arcs = [r.chunk_id for r in rows if r.extra.get("arc") and r.chunk_id]
    support = lift_walked(support, arcs, ENTITY_ARC)
    focus: dict[str, list[tuple[int, int]]] = {}
    for row in rows:
        if row.chunk_id and row.char_start is not None and row.char_end is not None:
            focus.setdefault(row.chunk_id, []).append((int(row.char_start), int(row.char_end)))
    passages = select_passages(
        env.store, support, question, env.vector(question), budget_tokens, settings.max_passage_tokens, focus
    )
    return EvidenceBoard(board["entity"], board["relation"], board["narrative"], passages, budget_tokens)


def _section_of_chunk(env: ToolEnv) -> dict[str, str]:
    return {c: s for s, chunk_ids in env.store.source.chunk_ids_of_section.items() for c in chunk_ids}


def _scene_order(env: ToolEnv) -> list[str]:
    return [r["section_id"] for r in env.store.source.section_rows if r["section_kind"] != "preamble"]


def _chunk_bm25(env: ToolEnv, question: str) -> dict[str, float]:
    scores = env.store.source.chunk_bm25.scores(question)
    return {chunk_id: float(scores[p]) for chunk_id, p in env.store.chunk_position.items() if p < len(scores)}


def answer_nkw(
    env: ToolEnv,
    question: str,
    options: list[str] | None,
    settings: AnswerSettings,
    retrieval: RetrievalSettings,
    planner: Planner = offline_planner,
    select_skills: SkillSelector | None = None,
    finalize: Finalizer | None = None,
    read_question: Callable[..., QueryIntents] = decompose,
    write_global: GlobalWriter | None = None,
) -> Answer:
    """Answer one question with the whole bundle; the final evidence cites source passages. A
    whole-story question is answered from the summary hierarchy's quotes: by `write_global` (the LLM)
    when given, else extractively."""

    started = time.perf_counter()
    allowed = allowed_tools(settings)
    intents = read_question(env, question, options)
    # The text channel's first-pass recall: its top-k token count is also the equal-budget reference.
    reference = call_tool(
        env, "hybrid_evidence_search", {"query": question, "top_k": retrieval.top_k_chunks}, 0, allowed
    )
    budget = settings.source_token_budget or sum(int(r.extra.get("n_tokens", 0)) for r in reference.rows)
    calls = [reference] + _forced_first_pass(env, question, intents, allowed, settings)
    named = named_sections(env.store.source.section_rows, question)
    board = build_board(env, question, intents, calls, settings, budget, reference.rows, named)
    stopped_early = False
    words = answer_words(question, options, settings)
    summary_call: ToolCall | None = None
    rounds = settings.follow_up_rounds
    if words is not None and settings.hierarchy and "summary_search" in allowed:
        # A whole-story question: no packet of passages holds its answer, the hierarchy's quotes do;
        # follow-up rounds would only refine a packet the answer does not read. The call is decided
        # by rule with the forced first pass (round 0), so it runs whatever the follow-up depth.
        scope = intents.scope.kind if intents.scope is not None else "work"
        summary_call = call_tool(env, "summary_search", {"query": question, "kind": scope, "words": words}, 0)
        calls.append(summary_call)
        rounds = 0
    for round_number in range(1, rounds + 1):
        plan = planner(env, intents, round_number, calls, allowed, settings.max_calls_per_round, board)
        if not plan:
            stopped_early = plan is None
            break
        calls.extend(
            call_tool(env, tool, arguments, round_number, allowed)
            for tool, arguments in plan[: settings.max_calls_per_round]
        )
        board = build_board(env, question, intents, calls, settings, budget, reference.rows, named)
    # Only the final packet is filled: the planner judges what the tools found, not the filler.
    board.passages = fill_budget(
        board.passages,
        window_candidates(
            env.store, env.fine_windows(), question, env.vector(question), settings.max_passage_tokens
        ),
        budget,
    )
    skills = (
        (select_skills or select_skills_offline)(question, options, intents, board)
        if settings.reading_skills and summary_call is None  # a hierarchy answer reads no packet
        else []
    )
    if summary_call is not None:
        final = global_answer(summary_call.rows, env.store.source.language, summary_call.arguments["kind"])
        if write_global is not None:
            final = write_global(env, question, summary_call.rows, final, words or 0)
    else:
        final = (finalize or offline_finalizer)(env, question, options, intents, board, skills)
    evidence = [
        EvidenceText(p.chunk_id, p.section_id, p.heading, p.ordinal, p.text, p.n_tokens, p.support, "source")
        for p in board.passages
    ]
    if final.citations is not None:
        citations = final.citations
    elif final.kind == SUMMARY_KIND:
        citations = _quote_citations(env, final)
    else:
        citations = _citations(env, final, board)
    answer = Answer(
        doc_id=env.store.doc_id,
        question=question,
        system="nkw",
        answer=final.text,
        is_offline=final.is_offline,
        options=options,
        chosen_option=final.chosen_option,
        option_scores=final.option_scores,
        citations=citations,
        evidence=evidence,
        trace=[c.trace() for c in calls],
        notes=list(final.notes or []),
        board=board.composition(),
        skills=list(skills),
    )
    answer.intents = intents.describe()  # entity ids stay in the JSON; the note names them
    answer.answer_kind = final.kind or ("option" if options else "")
    answer.notes.append(
        f"intents {readable_intents(env, answer.intents)}; skills {', '.join(skills) or 'none'}; "
        f"board {board.composition()}" + ("; stopped early: packet answerable" if stopped_early else "")
    )
    answer.latency_ms = round((time.perf_counter() - started) * 1000, 2)
    return answer


def readable_intents(env: ToolEnv, described: dict[str, Any]) -> str:
    """The question reading for a person: entity names instead of ids, no empty fields."""
    names = [str(env.store.entities_by_id.get(e, {}).get("name", e)) for e in described.get("entities", [])]
    parts = [f"asks {described.get('wh')}"]
    if names:
        parts.append("about " + ", ".join(names))
    if described.get("temporal"):
        parts.append("temporal cues " + ", ".join(described["temporal"]))
    if described.get("causal"):
        parts.append("causal")
    if described.get("needs"):
        parts.append("needs " + ", ".join(described["needs"]))
    if described.get("answer_slot"):
        parts.append(f"answer slot {described['answer_slot']}")
    parts.append(f"read by {described.get('reader', 'offline')}")
    return "; ".join(parts)


def _quote_citations(env: ToolEnv, final: FinalAnswer) -> list[Citation]:
    """Every quote of a paragraph answer with its section, in the answer's order."""
    cited = []
    for section_id, quote in final.quotes or []:
        heading, ordinal = env.store.section_heading(section_id)
        cited.append(Citation(section_id, heading or "", ordinal or 0, quote))
    return cited


def _citations(env: ToolEnv, final: FinalAnswer, board: EvidenceBoard) -> list[Citation]:
    cited: dict[str, Citation] = {}
    for section_id, quote in final.quotes or []:
        heading, ordinal = env.store.section_heading(section_id)
        cited.setdefault(section_id, Citation(section_id, heading or "", ordinal or 0, quote))
    for passage in sorted(board.passages, key=lambda p: -p.support):
        if len(cited) >= 3:
            break
        words = passage.text.split()
        cited.setdefault(
            passage.section_id,
            Citation(
                passage.section_id,
                passage.heading,
                passage.ordinal,
                " ".join(words[:24]) + (" …" if len(words) > 24 else ""),
            ),
        )
    return list(cited.values())[:3]
