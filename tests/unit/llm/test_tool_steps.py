"""Tool steps against the test server: tools are sent strict, and a reply whose text holds a tool
call (a `<tool_call>` tag, or JSON naming a function and its arguments) is asked again instead
of being read as "no call needed"; the agent's planner fails closed on one."""

from __future__ import annotations

import json
from typing import Any

import pytest

from schemas.responses.agent import ToolStep
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest, LLMResult
from tasks.llm.client.replies import REASK_TOOLS, looks_like_tool_call
from tasks.query.agent_loop import make_llm_planner
from tasks.query.evidence.board import EvidenceBoard
from tasks.query.plan import decompose
from tasks.query.tools.registry import function_schemas
from tests.fixtures.agent_fixtures import QUESTION
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer

AS_TEXT = [
    '<tool_call>\n{"name": "bm25_search_docs", "arguments": {"query": "key"}}\n</tool_call>',
    '{"name": "bm25_search_docs", "arguments": {"query": "key"}}',
    'I will search. {"name": "section_search", "parameters": {"query": "drawer"}}',
]


def _request() -> LLMRequest:
    return LLMRequest(
        stage="answer",
        item_id="q:plan-r1",
        doc_id="doc-1",
        prompt_id="plan_tools/v1",
        prompt_hash="h",
        messages=({"role": "user", "content": "Where is the key?"},),
    )


@pytest.mark.parametrize("text", AS_TEXT)
def test_a_tool_call_written_as_text_is_asked_again(text: str) -> None:
    replies = iter([text, {"tool_calls": [{"name": "bm25_search_docs", "arguments": {"query": "key"}}]}])
    with FakeOpenAIServer(responder=lambda body: next(replies)) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url)) as client:
            result = client.tool_step(_request(), function_schemas({"bm25_search_docs"}))
        first, second = server.chat_requests()
    assert [row["status"] for row in result.calls] == ["invalid", "ok"]
    assert "tool call as text" in result.calls[0]["error"]
    assert second.body["messages"][-1]["content"].startswith(REASK_TOOLS.split("{")[0])
    assert [call.name for call in result.value.tool_calls] == ["bm25_search_docs"]
    # Tools go out strict, so a server that can constrain tool calls does.
    assert all(tool["function"]["strict"] is True for tool in first.body["tools"])


def test_plain_answers_are_not_taken_for_tool_calls() -> None:
    for text in ("The key is in the drawer.", 'He said "name": Crowe.', "The tools were in the shed."):
        assert not looks_like_tool_call(text)
    assert all(looks_like_tool_call(text) for text in AS_TEXT)


class _TextStep:
    """A client whose tool step is text only (as a client without the re-ask would return)."""

    def __init__(self, content: str) -> None:
        self.content = content

    def tool_step(self, request: LLMRequest, tools: list[dict[str, Any]]) -> LLMResult[ToolStep]:
        return LLMResult(request, ToolStep(content=self.content), "ok", None, [])


def test_the_planner_fails_closed_on_a_tool_call_written_as_text(agent_env: Any) -> None:
    def factory(prompt_id: str, values: dict[str, Any], tag: str) -> LLMRequest:
        messages = ({"role": "user", "content": json.dumps(values)},)
        return LLMRequest("answer", f"q:{tag}", None, prompt_id, "h", messages)

    planner = make_llm_planner(_TextStep(AS_TEXT[0]), factory)
    board, intents = EvidenceBoard([], [], [], [], 0), decompose(agent_env, QUESTION)
    plan = planner(agent_env, intents, 1, [], {"bm25_search_docs"}, 3, board)
    assert plan == []  # not None: None would mean "the packet is answerable"
    assert "wrote a tool call as text" in planner.notes[-1]
    answerable = make_llm_planner(_TextStep("The passages are enough."), factory)
    assert answerable(agent_env, intents, 1, [], {"bm25_search_docs"}, 3, board) is None
    assert "judged the packet answerable" in answerable.notes[-1]
