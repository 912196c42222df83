"""The LLM follow-up agent through the fake OpenAI-compatible server: native tool calls, invalid
arguments, over-budget plans, a model that never stops, a dead server and re-asked replies —
every run ends with an answer and a complete trace. Also `tool_step` at the client level."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from schemas.config import Settings
from schemas.responses.agent import ToolCallRequest, ToolStep
from tasks.llm.client.cache import LLMCache
from tasks.llm.client.http import strict_tool
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest, LLMResult
from tasks.llm.client.replies import REASK_TOOLS
from tasks.query.agent_loop import (
    LLMPlanner,
    history_summary,
    make_llm_planner,
    packet_summary,
    request_factory_for,
)
from tasks.query.answer_nkw import answer_nkw
from tasks.query.answer_types import Answer
from tasks.query.evidence.board import BoardItem, EvidenceBoard, Passage
from tasks.query.plan import decompose
from tasks.query.reader.llm import LLMFinalizer, make_llm_finalizer
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.registry import TOOLS, ToolCall, function_schemas
from tasks.query.tools.types import ToolRow
from tasks.tables.contracts import check_contracts
from tasks.tables.io import to_arrow
from tests.fixtures.agent_fixtures import QUESTION, calls, make_client, scripted
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer

STOP = {"tool_calls": [], "content": "The passages already show where the key was."}


def run(
    env: ToolEnv,
    settings: Settings,
    client: OpenAICompatibleClient,
    question: str = QUESTION,
    options: list[str] | None = None,
) -> tuple[Answer, LLMPlanner, LLMFinalizer]:
    factory = request_factory_for(env.store.doc_id, env.store.source.language, question, options)
    planner = make_llm_planner(client, factory)
    finalizer = make_llm_finalizer(
        client, factory, render_skills=lambda ids, language: f"Reading skills: {ids}"
    )
    answer = answer_nkw(
        env,
        question,
        options,
        settings.answer,
        settings.retrieval,
        planner=planner,
        select_skills=lambda *_: ["literal_slot"],
        finalize=finalizer,
    )
    return answer, planner, finalizer


def rounds(answer: Answer) -> dict[int, list[dict[str, Any]]]:
    by_round: dict[int, list[dict[str, Any]]] = {}
    for row in answer.trace:
        by_round.setdefault(row["round"], []).append(row)
    return by_round


def planner_requests(server: FakeOpenAIServer) -> list[dict[str, Any]]:
    return [r.body for r in server.chat_requests() if r.body.get("tools")]


# -- the agent loop ------------------------------------------------------------------------


def test_tool_calls_then_early_stop(env: ToolEnv, settings: Settings, server: FakeOpenAIServer) -> None:
    server.responder = scripted(
        lambda n: (
            calls(
                ("section_search", {"query": "drawer brass key", "top_k": 2}),
                ("bm25_search_docs", {"query": "Crowe drawer key", "top_k": 3}),
            )
            if n == 1
            else STOP
        )
    )
    with make_client(server.url) as client:
        answer, planner, finalizer = run(env, settings, client)
    by_round = rounds(answer)
    forced = [r["tool"] for r in by_round[0]]
    # The forced first pass (plus one entity_lookup per entity the question names or entity_search finds).
    assert [t for t in forced if t != "entity_lookup"] == [
        "hybrid_evidence_search",
        "entity_search",
        "relation_search",
        "atomic_fact_search",
        "narrative_semantic_search",
    ]
    assert forced.count("entity_lookup") in (1, 2, 3)
    assert [(r["tool"], r["error"]) for r in by_round[1]] == [
        ("section_search", None),
        ("bm25_search_docs", None),
    ]
    assert by_round[1][0]["rows"] > 0 and 2 not in by_round
    assert "stopped early: packet answerable" in answer.notes[-1]
    assert any("round 2: the model judged the packet answerable" in n for n in planner.notes)
    first, second = planner_requests(server)
    assert first["tool_choice"] == "auto"
    assert {t["function"]["name"] for t in first["tools"]} == set(TOOLS)
    assert "Source passages:\n- §" in first["messages"][-1]["content"]
    assert "round 1: section_search" in second["messages"][-1]["content"]  # the model sees its own calls
    assert answer.is_offline is False and answer.answer == "In Mr. Crowe's drawer."
    assert planner.failures == [] and finalizer.failures == []
    rows = planner.llm_calls + finalizer.llm_calls
    assert {row["item_id"].split(":")[1] for row in rows} == {"plan-r1", "plan-r2", "final"}
    assert check_contracts("llm_calls", to_arrow("llm_calls", rows), lambda _table: None) == []


def test_invalid_arguments_and_unknown_tools_are_traced_and_corrected(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    bad = calls(
        ("section_search", {"query": 5}),
        ("bm25_search_docs", {"query": "key", "colour": "red"}),
        ("summon_oracle", {"query": "key"}),
        ("vdb_search_sentences", '{"query": "key", '),
    )
    fixed = calls(("bm25_search_docs", {"query": "key", "top_k": 2}))
    server.responder = scripted(lambda n: bad if n == 1 else fixed)
    with make_client(server.url) as client:
        answer, planner, _ = run(env, settings, client)
    errors = [row["error"] for row in rounds(answer)[1]]
    assert "invalid arguments for section_search" in errors[0] and "string" in errors[0]
    assert "invalid arguments for bm25_search_docs" in errors[1] and "colour" in errors[1]
    assert "unknown or disabled tool 'summon_oracle'" in errors[2]
    assert "arguments are not JSON" in errors[3] and rounds(answer)[1][3]["arguments"] == {
        "raw": '{"query": "key", '
    }
    assert [(r["tool"], r["error"], r["rows"] > 0) for r in rounds(answer)[2]] == [
        ("bm25_search_docs", None, True)
    ]
    history = planner_requests(server)[1]["messages"][-1]["content"]
    assert (
        "ERROR: invalid arguments for section_search" in history
        and "ERROR: unknown or disabled tool" in history
    )
    assert answer.answer and answer.evidence and answer.is_offline is False


def test_over_budget_plan_runs_only_max_calls(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    nine = calls(*[("bm25_search_docs", {"query": f"key {i}", "top_k": 1}) for i in range(9)])
    server.responder = scripted(lambda n: nine if n == 1 else STOP)
    with make_client(server.url) as client:
        answer, planner, _ = run(env, settings, client)
    executed = rounds(answer)[1]
    assert len(executed) == settings.answer.max_calls_per_round == 5
    assert [r["arguments"]["query"] for r in executed] == [f"key {i}" for i in range(5)]
    assert planner.dropped == {1: 4} and any(
        "4 over the budget of 5 were dropped" in n for n in planner.notes
    )
    assert "4 further calls were not run" in planner_requests(server)[1]["messages"][-1]["content"]


def test_a_model_that_never_stops_is_bounded_by_the_round_limit(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    server.responder = scripted(
        lambda n: calls(("vdb_search_sentences", {"query": f"round {n} key", "top_k": 2}))
    )
    with make_client(server.url) as client:
        answer, planner, finalizer = run(env, settings, client)
    assert sorted(rounds(answer)) == list(range(settings.answer.follow_up_rounds + 1)) == [0, 1, 2]
    assert len(planner_requests(server)) == settings.answer.follow_up_rounds
    assert "stopped early" not in answer.notes[-1]
    assert finalizer.llm_calls[-1]["status"] == "ok" and answer.is_offline is False
    assert all(row["error"] is None for row in answer.trace)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("failure", ["down", "http_500"])
def test_dead_server_fails_closed_with_an_offline_answer(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer, failure: str
) -> None:
    if failure == "down":
        url = f"http://127.0.0.1:{_free_port()}/v1"
    else:
        server.set_fault_rate(1.0, kinds=("http_500",))
        url = server.url
    with make_client(url, max_retries=1) as client:
        answer, planner, finalizer = run(env, settings, client)
    assert sorted(rounds(answer)) == [0]  # the forced pass, then nothing
    assert {"entity_search", "relation_search", "atomic_fact_search", "narrative_semantic_search"} <= {
        row["tool"] for row in answer.trace
    }
    assert all({"round", "tool", "arguments", "rows", "ms", "error"} <= set(row) for row in answer.trace)
    assert [f["stage"] for f in planner.failures + finalizer.failures] == ["answer", "answer"]
    assert planner.failures[0]["error"].startswith("llm error:")
    assert any("LLM planning failed (error): kept the current packet" in n for n in planner.notes)
    assert "stopped early" not in answer.notes[-1]  # a failure is not an answerable packet
    assert answer.is_offline is True and answer.notes[0] == "LLM answer failed (error): offline answer"
    assert answer.answer and answer.citations and answer.evidence
    assert all(row["status"] == "error" for row in planner.llm_calls + finalizer.llm_calls)
    assert len(planner.llm_calls) == len(finalizer.llm_calls) == 2  # one retry each
    failures = planner.failures + finalizer.failures
    assert check_contracts("failures", to_arrow("failures", failures), lambda _table: None) == []


def test_malformed_tool_step_is_reasked_once(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    server.responder = scripted(
        lambda n: calls(("bm25_search_docs", {"query": "drawer", "top_k": 2})) if n == 1 else STOP
    )
    server.queue_faults("schema_invalid")  # the first planner reply has neither text nor tool calls
    with make_client(server.url) as client:
        answer, planner, _ = run(env, settings, client)
    round_one = [row for row in planner.llm_calls if row["item_id"].endswith("plan-r1")]
    assert [row["status"] for row in round_one] == ["invalid", "ok"]
    assert "neither content nor tool calls" in round_one[0]["error"]
    reasked = planner_requests(server)[1]["messages"]
    assert reasked[-2]["role"] == "assistant" and reasked[-1]["content"].startswith(REASK_TOOLS.split("{")[0])
    assert [r["tool"] for r in rounds(answer)[1]] == ["bm25_search_docs"] and planner.failures == []


def test_broken_arguments_fault_becomes_a_traced_error(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    server.responder = scripted(
        lambda n: calls(("bm25_search_docs", {"query": "drawer"})) if n == 1 else STOP
    )
    server.queue_faults("malformed_json")
    with make_client(server.url) as client:
        answer, _, _ = run(env, settings, client)
    [row] = rounds(answer)[1]
    assert row["tool"] == "bm25_search_docs" and "arguments are not JSON" in row["error"]
    assert answer.answer and answer.is_offline is False


class StubClient:
    """Answers every tool_step with a fixed ToolStep, recording the tools it was offered."""

    def __init__(self, step: ToolStep) -> None:
        self.step, self.offered, self.requests = step, [], []

    def tool_step(self, request: LLMRequest, tools: list[dict[str, Any]]) -> LLMResult[ToolStep]:
        self.offered.append({t["function"]["name"] for t in tools})
        self.requests.append(request)
        return LLMResult(request, self.step, "ok", None, [{"status": "ok", "item_id": request.item_id}])


def test_planner_returns_at_most_max_calls_with_arguments_as_given(env: ToolEnv) -> None:
    raw = ['{"query": "a"}', '{"query": ', "[1, 2]", ""] + ['{"query": "b"}'] * 5
    client = StubClient(
        ToolStep(
            tool_calls=[
                ToolCallRequest(id=f"c{i}", name="bm25_search_docs", arguments=a) for i, a in enumerate(raw)
            ]
        )
    )
    planner = make_llm_planner(client, request_factory_for(env.store.doc_id, "en", QUESTION))
    board = EvidenceBoard([], [], [], [], 0)
    intents = decompose(env, QUESTION)
    plan = planner(env, intents, 1, [], {"bm25_search_docs", "section_search"}, 3, board)
    assert plan == [
        ("bm25_search_docs", {"query": "a"}),
        ("bm25_search_docs", '{"query": '),
        ("bm25_search_docs", "[1, 2]"),
    ]
    assert client.offered == [{"bm25_search_docs", "section_search"}] and planner.dropped == {1: 6}
    assert planner(env, intents, 2, [], {"bm25_search_docs"}, 5, board)[3] == ("bm25_search_docs", {})


def test_plan_prompt_in_chinese_carries_the_same_values(env: ToolEnv) -> None:
    client = StubClient(ToolStep(content="证据已经足够。"))
    planner = make_llm_planner(client, request_factory_for(env.store.doc_id, "zh", "钥匙藏在哪里？"))
    history = [ToolCall("bm25_search_docs", {"query": "钥匙"}, 1, [], 1.0, "invalid arguments")]
    assert (
        planner(
            env,
            decompose(env, "钥匙藏在哪里？"),
            2,
            history,
            {"bm25_search_docs"},
            4,
            EvidenceBoard([], [], [], [], 0),
        )
        is None
    )
    [request] = client.requests
    system, user = (m["content"] for m in request.messages)
    assert (
        request.prompt_id == "plan_tools/v1"
        and request.item_id.endswith(":plan-r2")
        and request.stage == "answer"
    )
    assert "最多调用 4 个工具" in system and "第 2 轮" in user and "问题：钥匙藏在哪里？" in user
    assert "ERROR: invalid arguments" in user
    assert planner.notes == ["round 2: the model judged the packet answerable, no tool calls: 证据已经足够。"]


# -- prompt parts --------------------------------------------------------------------------


def _row(kind: str, item_id: str, text: str, ordinal: int | None = None) -> ToolRow:
    return ToolRow(kind, item_id, text, 0.5, "graph", "d", section_ordinal=ordinal)


def test_packet_summary_lists_every_channel_under_the_token_cap() -> None:
    entity = BoardItem(
        _row("entity", "ent_nia", "Nia (character). A girl who finds the key."), "entity", 0.9, "e"
    )
    entity.facts = [
        _row("fact", "f1", "Nia took the key from the drawer."),
        _row("fact", "f2", "Nia is nine."),
        _row("fact", "f3", "Never shown: only two facts per entity."),
    ]
    passages = [
        Passage(f"c{i}", f"s{i}", f"SCENE {i}", i, "word " * 200, 200, 0, 1000, 1.0) for i in range(40)
    ]
    board = EvidenceBoard(
        [entity],
        [BoardItem(_row("relation", "r1", "Nia — Tom: siblings", 4), "relation", 0.5, "r")],
        [BoardItem(_row("event", "v1", "Nia hides the key in the van", 7), "narrative", 0.5, "n")],
        passages,
        4000,
    )
    full = packet_summary(board, max_tokens=10_000)
    assert "[ent_nia] Nia (character)" in full and "· Nia took the key" in full and "Never shown" not in full
    assert "- event: Nia hides the key in the van (§7)" in full and "- Nia — Tom: siblings (§4)" in full
    assert "- §0 SCENE 0: word word" in full and full.count("…") == 40  # passages cut to their first words
    capped = packet_summary(board, max_tokens=300)
    assert "(+" in capped and "more not shown" in capped and capped.count("\n- §") < 40
    assert "Entities:\n  (none)" in packet_summary(EvidenceBoard([], [], [], passages[:1], 100))
    assert "实体:\n  （无）" in packet_summary(EvidenceBoard([], [], [], passages[:1], 100), language="zh")


def test_history_summary_shows_arguments_outcomes_and_dropped_calls() -> None:
    history = history_summary(
        [
            ToolCall("entity_search", {"query": "key"}, 0, [], 1.0),
            ToolCall("section_search", {"raw": "x"}, 1, [], 1.0, "invalid arguments for section_search"),
        ],
        {1: 3},
    )
    assert history.splitlines() == [
        '- forced first pass: entity_search {"query": "key"} -> 0 rows',
        '- round 1: section_search {"raw": "x"} -> ERROR: invalid arguments for section_search',
        "- round 1: 3 further calls were not run (over the per-round budget)",
    ]
    assert history_summary([]) == "(none)"
    chinese = history_summary([ToolCall("bm25_search_docs", {"query": "钥匙"}, 0, [], 1.0)], {2: 1}, "zh")
    assert chinese.splitlines() == [
        '- 第一轮强制检索: bm25_search_docs {"query": "钥匙"} -> 0 条结果',
        "- 第 2 轮: 另有 1 个调用超出本轮预算，未执行",
    ]


# -- the client's tool_step ----------------------------------------------------------------


def _request(text: str = "Find the key.") -> LLMRequest:
    return LLMRequest(
        stage="answer",
        item_id="q:plan-r1",
        doc_id="doc-1",
        prompt_id="plan_tools/v1",
        prompt_hash="h",
        messages=({"role": "user", "content": text},),
    )


def test_tool_step_parses_tool_calls_and_is_cached(server: FakeOpenAIServer, tmp_path: Path) -> None:
    server.responder = lambda body: calls(
        ("bm25_search_docs", {"query": "key", "top_k": 2}), ("section_search", "not json")
    )
    tools = function_schemas({"bm25_search_docs", "section_search"})
    with OpenAICompatibleClient(fast_llm_settings(server.url), cache=LLMCache(tmp_path)) as client:
        first = client.tool_step(_request(), tools)
        second = client.tool_step(_request(), tools)
        other_tools = client.tool_step(_request(), function_schemas({"bm25_search_docs"}))
    assert first.status == "ok" and isinstance(first.value, ToolStep) and first.value.content is None
    assert [(c.name, c.arguments) for c in first.value.tool_calls] == [
        ("bm25_search_docs", '{"query": "key", "top_k": 2}'),
        ("section_search", "not json"),
    ]
    assert all(c.id.startswith("call_") for c in first.value.tool_calls)
    assert first.calls[0]["finish_reason"] == "tool_calls" and first.calls[0]["stage"] == "answer"
    assert second.status == "cached" and second.value == first.value and second.call_key == first.call_key
    assert (
        other_tools.status == "ok" and other_tools.call_key != first.call_key
    )  # the tools are part of the key
    assert server.counts["chat"] == 2
    sent = server.chat_requests()[0].body
    assert sent["tools"] == [strict_tool(t) for t in tools] and sent["tool_choice"] == "auto"
    assert "response_format" not in sent


def test_tool_step_text_reply_and_failures(server: FakeOpenAIServer) -> None:
    server.responder = lambda body: "<think>hmm</think> The packet is enough."
    with make_client(server.url) as client:
        text = client.tool_step(_request(), function_schemas())
        server.queue_faults("schema_invalid", "schema_invalid")
        invalid = client.tool_step(_request("again"), function_schemas())
        server.queue_faults("refusal")
        refused = client.tool_step(_request("once more"), function_schemas())
    assert text.value == ToolStep(content="The packet is enough.", tool_calls=[])
    assert invalid.value is None and invalid.status == "invalid" and len(invalid.calls) == 2
    assert json.loads(invalid.failure_row()["payload"])["attempts"] == 2
    assert refused.status == "refused" and refused.failure_row()["error"].startswith("llm refused:")


def test_a_model_that_asks_nothing_gets_the_offline_planners_follow_up(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    """A small model judges every packet answerable; the offline rules still ask for what it lacks."""
    from tasks.query.answer_nkw import offline_planner

    server.responder = scripted(lambda n: STOP)
    question = "What does Nia write on the pad after the radio warning?"
    factory = request_factory_for(env.store.doc_id, env.store.source.language, question)
    asked: list[int] = []

    def rules(*args: Any) -> Any:
        plan = offline_planner(*args)
        asked.append(len(plan or []))
        return plan

    with make_client(server.url) as client:
        planner = make_llm_planner(client, factory, fallback=rules)
        answer = answer_nkw(
            env, question, None, settings.answer, settings.retrieval, planner=planner,
            select_skills=lambda *_: [], finalize=make_llm_finalizer(client, factory),
        )  # fmt: skip
    assert len(planner_requests(server)) == len(asked) >= 1  # the model was asked every round first
    follow_ups = [row for row in answer.trace if row["round"] >= 1]
    assert asked[0] > 0 and sum(asked) == len(follow_ups)  # the rules asked, and their calls ran
    assert any("round 1: the packet lacks what the question needs" in note for note in planner.notes)
    assert not any("the model judged the packet answerable" in note for note in planner.notes[-1:])


def test_the_questions_shape_adds_the_episode_walk_to_the_models_first_round(env: ToolEnv) -> None:
    """A small model plans searches by the question's words; an order question still walks the
    episodes in round 1, first, and the model's own call of the walk is not run twice."""
    from tasks.query.plan import shape_calls
    from tasks.query.tools.episode_walk import WALK_ROWS

    own = [
        ToolCallRequest(id="c0", name="episode_walk_search", arguments='{"query": "key"}'),
        *[
            ToolCallRequest(id=f"c{i}", name="bm25_search_docs", arguments='{"query": "key"}')
            for i in (1, 2, 3)
        ],
    ]
    client = StubClient(ToolStep(tool_calls=own))
    factory = request_factory_for(env.store.doc_id, "en", QUESTION)
    planner = make_llm_planner(client, factory, required=shape_calls)
    board = EvidenceBoard([], [], [], [], 0)
    intents = decompose(env, QUESTION)  # "... before Nia took it?": an order question
    assert intents.shape is not None and intents.shape.kind == "order"
    allowed = {"bm25_search_docs", "episode_walk_search"}
    plan = planner(env, intents, 1, [], allowed, 3, board)
    walk = ("episode_walk_search", {"query": QUESTION, "top_k": WALK_ROWS})
    assert plan == [walk, ("bm25_search_docs", {"query": "key"}), ("bm25_search_docs", {"query": "key"})]
    assert "round 1: the question's shape adds episode_walk_search" in planner.notes
    # Later rounds are the model's alone; without the walk among the allowed tools nothing is added.
    as_asked = [("episode_walk_search", {"query": "key"})] + [("bm25_search_docs", {"query": "key"})] * 2
    assert planner(env, intents, 2, [], allowed, 3, board) == as_asked
    assert planner(env, intents, 1, [], {"bm25_search_docs"}, 3, board) == as_asked
    assert sum("shape adds" in note for note in planner.notes) == 1
    # A failed reply keeps the shape's calls: they are decided by rule, not by the model.
    failing = StubClient(ToolStep())
    failing.tool_step = lambda request, tools: LLMResult(request, None, "error", "down", [])  # type: ignore
    broken = make_llm_planner(failing, factory, required=shape_calls)
    assert broken(env, intents, 1, [], allowed, 3, board) == [walk]
    assert broken.failures
