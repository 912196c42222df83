"""The LLM follow-up planner (paper §3.3; appendix A.2 step 4, A.3): after the forced first pass,
the model sees a compact summary of the evidence packet and of the calls made so far, and either
stops (the packet already answers the question) or asks for at most `max_calls` tool calls
through native function calling.

The planner only proposes calls: `answer_nkw` runs them through `call_tool`, which validates the
arguments and records every error in the trace. Fail-closed: when the model cannot be reached
or its reply is unusable, the round adds nothing and the current packet is kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

from schemas.ids import stable_hash
from tasks.llm.client.protocol import LLMClient, LLMRequest
from tasks.llm.client.replies import looks_like_tool_call
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.query.evidence.board import EvidenceBoard
from tasks.query.plan import QueryIntents
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.registry import ToolCall, function_schemas
from tasks.text import TOKEN, count_tokens

PLAN_PROMPT = "plan_tools/v1"
PACKET_TOKENS = 1500  # the planner needs to see what is there, not read it
HISTORY_CALLS = 30  # the most recent calls shown to the model
RequestFactory = Callable[[str, dict[str, Any], str], LLMRequest]
LABELS = {
    "en": {
        "passages": "Source passages",
        "entities": "Entities",
        "narrative": "Narrative items",
        "relations": "Relations",
        "none": "(none)",
        "more": "(+{n} more not shown)",
        "forced": "forced first pass",
        "round": "round {n}",
        "rows": "{n} rows",
        "dropped": "{n} further calls were not run (over the per-round budget)",
    },
    "zh": {
        "passages": "原文段落",
        "entities": "实体",
        "narrative": "叙事条目",
        "relations": "关系",
        "none": "（无）",
        "more": "（另有 {n} 条未显示）",
        "forced": "第一轮强制检索",
        "round": "第 {n} 轮",
        "rows": "{n} 条结果",
        "dropped": "另有 {n} 个调用超出本轮预算，未执行",
    },
}


def request_factory_for(
    doc_id: str,
    language: str,
    question: str,
    options: list[str] | None = None,
    stage: str = "answer",
    max_tokens: int | None = None,
    seed: int | None = None,
    temperature: float | None = None,
) -> RequestFactory:
    """Requests for one question: the prompt in the document's language, item id `q_<hash>:<suffix>`.
    `seed` and `temperature` make one of several sampled answers (Pass@k); None keeps the defaults."""
    question_key = f"q_{stable_hash(doc_id, question, options or [])}"

    def factory(prompt_id: str, values: dict[str, Any], item_suffix: str) -> LLMRequest:
        prompt = load_prompt(prompt_id, language)
        return LLMRequest(
            stage=stage,
            item_id=f"{question_key}:{item_suffix}",
            doc_id=doc_id,
            prompt_id=prompt.prompt_id,
            prompt_hash=prompt.sha256,
            messages=render_messages(prompt, values),
            max_tokens=max_tokens,
            seed=seed,
            temperature=temperature,
        )

    return factory


def clip(text: str, tokens: int) -> str:
    """`text` on one line, cut after `tokens` tokens (words, symbols or CJK characters)."""
    text = " ".join(str(text).split())
    for index, match in enumerate(TOKEN.finditer(text)):
        if index == tokens:
            return text[: match.start()].rstrip() + " …"
    return text


def _section(ordinal: int | None) -> str:
    return f" (§{ordinal})" if ordinal is not None else ""


def packet_summary(board: EvidenceBoard, max_tokens: int = PACKET_TOKENS, language: str = "en") -> str:
    """What the packet holds, compactly: passage headings and first words, entity names with
    highlights, relation lines and narrative item titles, cut to `max_tokens` in that priority."""
    label = LABELS.get(language, LABELS["en"])
    groups: list[tuple[str, list[str]]] = [
        (
            label["passages"],
            [f"- §{p.ordinal} {clip(p.heading, 16)}: {clip(p.text, 28)}" for p in board.passages],
        ),
        (
            label["entities"],
            [
                f"- [{item.row.item_id}] {clip(item.row.text, 30)}"
                + "".join(f"\n    · {clip(fact.text, 20)}" for fact in item.facts[:2])
                for item in board.entities
            ],
        ),
        (
            label["narrative"],
            [
                f"- {item.row.kind}: {clip(item.row.text, 22)}{_section(item.row.section_ordinal)}"
                for item in board.narrative
            ],
        ),
        (
            label["relations"],
            [f"- {clip(item.row.text, 24)}{_section(item.row.section_ordinal)}" for item in board.relations],
        ),
    ]
    used = 0
    blocks = []
    for title, lines in groups:
        kept = []
        for line in lines:
            cost = count_tokens(line)
            if used + cost > max_tokens:
                break
            kept.append(line)
            used += cost
        more = "\n  " + label["more"].format(n=len(lines) - len(kept)) if len(kept) < len(lines) else ""
        blocks.append(f"{title}:\n" + ("\n".join(kept) if kept else "  " + label["none"]) + more)
    return "\n".join(blocks)


def history_summary(
    calls: list[ToolCall], dropped: dict[int, int] | None = None, language: str = "en"
) -> str:
    """Every call so far with its arguments and outcome, so the model can correct errors and not
    repeat itself."""
    label = LABELS.get(language, LABELS["en"])
    lines = []
    for call in calls[-HISTORY_CALLS:]:
        when = label["forced"] if call.round == 0 else label["round"].format(n=call.round)
        arguments = clip(json.dumps(call.arguments, ensure_ascii=False, sort_keys=True), 60)
        outcome = f"ERROR: {call.error}" if call.error else label["rows"].format(n=len(call.rows))
        lines.append(f"- {when}: {call.tool} {arguments} -> {outcome}")
    for round_number, count in sorted((dropped or {}).items()):
        lines.append(f"- {label['round'].format(n=round_number)}: {label['dropped'].format(n=count)}")
    return "\n".join(lines) if lines else label["none"]


def _arguments(raw: str) -> dict[str, Any] | str:
    """Parsed arguments when they are a JSON object; otherwise the raw text, for call_tool to reject."""
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return raw
    return parsed if isinstance(parsed, dict) else raw


@dataclass
class LLMPlanner:
    """A `Planner` (tasks.query.answer_nkw) backed by an LLM; one instance per question.

    `failures` (failures rows), `llm_calls` (llm_calls rows) and `notes` record what happened."""

    client: LLMClient
    request_factory: RequestFactory
    packet_tokens: int = PACKET_TOKENS
    failures: list[dict[str, str]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    dropped: dict[int, int] = field(default_factory=dict)  # round -> proposed calls over the budget
    # The offline planner (tasks.query.answer_nkw.offline_planner): when the model asks for nothing, it
    # says whether the packet lacks what the question needs and which calls would bring it. A small
    # model never asks for a follow-up (0 of 40 dev questions), so without this the LLM path reads
    # a packet the offline path would have completed.
    fallback: Callable[..., list[tuple[str, dict[str, Any]]] | None] | None = None
    # The structure's calls the question's shape asks for (tasks.query.plan.shape_calls): run in the
    # first follow-up round beside the model's own. A model that plans asks for searches by the
    # question's words; the episode walk reaches the scenes those words miss.
    required: Callable[[ToolEnv, QueryIntents], list[tuple[str, dict[str, Any]]]] | None = None

    def __call__(
        self,
        env: ToolEnv,
        intents: QueryIntents,
        round_number: int,
        calls: list[ToolCall],
        allowed: set[str],
        max_calls: int,
        board: EvidenceBoard,
    ) -> list[tuple[str, dict[str, Any] | str]] | None:
        """This round's tool calls; None when the model judges the packet answerable, [] when it failed."""
        language = env.store.source.language
        values = {
            "question": intents.question,
            "intents": json.dumps(intents.describe(), ensure_ascii=False),
            "round": round_number,
            "max_calls": max_calls,
            "packet": packet_summary(board, self.packet_tokens, language),
            "history": history_summary(calls, self.dropped, language),
        }
        plan = self._ask(round_number, allowed, max_calls, values)
        if plan is not None and round_number == 1 and self.required is not None:
            plan = self._with_required(self.required(env, intents), plan, allowed, max_calls)
        if plan or self.fallback is None:
            return plan
        rules = self.fallback(env, intents, round_number, calls, allowed, max_calls, board)
        if rules:
            self.notes.append(
                f"round {round_number}: the packet lacks what the question needs by the offline rules: "
                f"{len(rules)} follow-up call(s) of the offline planner"
            )
            return rules
        return plan

    def _with_required(
        self,
        required: list[tuple[str, dict[str, Any]]],
        plan: list[tuple[str, dict[str, Any] | str]],
        allowed: set[str],
        max_calls: int,
    ) -> list[tuple[str, dict[str, Any] | str]]:
        """The shape's calls first, then the model's calls of other tools, within `max_calls`; also
        when the model's reply failed (the shape's calls are decided by rule, not by the model)."""
        required = [(tool, arguments) for tool, arguments in required if tool in allowed]
        if not required:
            return plan
        names = {tool for tool, _ in required}
        merged = [*required, *[(tool, arguments) for tool, arguments in plan if tool not in names]]
        self.notes.append(f"round 1: the question's shape adds {', '.join(sorted(names))}")
        return merged[:max_calls]

    def _ask(
        self, round_number: int, allowed: set[str], max_calls: int, values: dict[str, Any]
    ) -> list[tuple[str, dict[str, Any] | str]] | None:
        """The model's calls for this round; None when it judges the packet answerable, [] on failure."""
        request = self.request_factory(PLAN_PROMPT, values, f"plan-r{round_number}")
        result = self.client.tool_step(request, function_schemas(allowed))
        self.llm_calls.extend(result.calls)
        if result.value is None:
            # Fail closed: [] ends the follow-up loop like None, without claiming the packet is answerable.
            self.failures.append(result.failure_row())
            self.notes.append(
                f"round {round_number}: LLM planning failed ({result.status}): kept the current packet"
            )
            return []
        step = result.value
        if not step.tool_calls and looks_like_tool_call(step.content):
            # A call written as text is a malformed call, not "no call needed": fail closed.
            self.notes.append(f"round {round_number}: the model wrote a tool call as text: kept the packet")
            return []
        if not step.tool_calls:
            said = f": {clip(step.content, 40)}" if step.content else ""
            self.notes.append(
                f"round {round_number}: the model judged the packet answerable, no tool calls{said}"
            )
            return None
        plan = [(call.name, _arguments(call.arguments)) for call in step.tool_calls]
        if len(plan) > max_calls:
            self.dropped[round_number] = len(plan) - max_calls
            self.notes.append(
                f"round {round_number}: the model asked for {len(plan)} tool calls; "
                f"{len(plan) - max_calls} over the budget of {max_calls} were dropped"
            )
        return plan[:max_calls]


def make_llm_planner(
    client: LLMClient,
    request_factory: RequestFactory,
    fallback: Callable[..., list[tuple[str, dict[str, Any]]] | None] | None = None,
    required: Callable[[ToolEnv, QueryIntents], list[tuple[str, dict[str, Any]]]] | None = None,
) -> LLMPlanner:
    """The LLM planner for one question (a `Planner` with `failures`, `llm_calls` and `notes`);
    `fallback` plans the follow-up the model did not ask for when the packet lacks something,
    `required` the calls the question's shape asks for whatever the model plans."""
    return LLMPlanner(client, request_factory, fallback=fallback, required=required)
