"""Several items per request (tasks.llm.requests.grouped): answers mapped back by number, left-out items
asked again once on their own, failed and truncated requests recorded for exactly their items."""

from __future__ import annotations

import json
import re
from typing import Any

from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.grouped import group_items, run_grouped
from tests.fixtures.grouped_requests import grouped_ctx, merge_shape, render_pairs
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer

PROMPT = "canonicalize_entities/v2"
SHAPE = merge_shape()


_ctx, _render = grouped_ctx, render_pairs


def listed(body: dict[str, Any]) -> list[str]:
    first = next(m["content"] for m in body["messages"] if m["role"] == "user")  # re-asks come later
    return re.findall(r"^\d+\. Record A: (\S+) /", first, re.MULTILINE)


def answer(numbers: list[int]) -> dict[str, Any]:
    return {"items": [{"number": n, "decision": "separate", "reason": f"item {n}"} for n in numbers]}


def test_group_items_respects_budget_and_count() -> None:
    assert group_items("abcde", [5, 5, 5, 20, 1], budget=12, max_items=2) == [["a", "b"], ["c"], ["d"], ["e"]]


def test_answers_map_back_by_number_and_left_out_items_are_asked_again() -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any]:
        ids = listed(body)
        if ids == ["a", "b", "c"]:
            return answer([3, 1, 9])  # b left out, an invented number 9, out of order
        return answer(list(range(1, len(ids) + 1)))

    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url), cache=None) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a", "b", "c"], ["d"]], _render)
    assert {k: v.reason for k, v in batch.values.items()} == {
        "a": "item 1",
        "c": "item 3",
        "d": "item 1",
        "b": "item 1",  # asked again alone, as item 1
    }
    assert batch.asked_with["b"] == ("b",) and batch.asked_with["c"] == ("a", "b", "c")
    assert batch.failures == []
    assert sorted(c["item_id"] for c in batch.calls) == ["a+2", "b#again", "d"]


def test_failed_truncated_and_missing_items_become_their_own_failures() -> None:
    def responder(body: dict[str, Any]) -> Any:
        ids = listed(body)
        if "x" in ids:
            return "{broken"  # invalid twice (asked, re-asked): every item of the request fails
        if ids[0] == "m":
            return answer([n for n, i in enumerate(ids, 1) if i != "m"])  # m left out, every time
        return answer(list(range(1, len(ids) + 1)))

    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        server.queue_faults("length", "length")  # the first request (p alone) truncated twice
        settings = fast_llm_settings(server.url, concurrency=1, max_retries=0)
        with OpenAICompatibleClient(settings, cache=None) as client:
            groups = [["p"], ["x", "y"], ["m", "n"]]
            batch = run_grouped(_ctx(client), SHAPE, groups, _render)
    failures = {row["item_id"]: json.loads(row["payload"])["status"] for row in batch.failures}
    assert failures == {"p": "truncated", "x": "invalid", "y": "invalid", "m": "missing"}
    assert set(batch.values) == {"n"}
    missing = next(row for row in batch.failures if row["item_id"] == "m")
    assert missing["error"].startswith("llm missing") and missing["stage"] == "canonicalize_entities"


def test_a_reply_that_answers_none_is_asked_again_in_halves_not_the_same() -> None:
    def responder(body: dict[str, Any]) -> dict[str, Any]:
        ids = listed(body)
        if len(ids) > 2 or ids == ["z"]:
            return answer([])  # a small model's empty list, for any group of more than two
        return answer(list(range(1, len(ids) + 1)))

    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url), cache=None) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a", "b", "c", "d"], ["z"]], _render)
            asked = [listed(r.body) for r in server.chat_requests()]
    assert sorted(batch.values) == ["a", "b", "c", "d"]
    assert sorted(asked) == [["a", "b"], ["a", "b", "c", "d"], ["c", "d"], ["z"]]  # z: not the same again
    assert [(row["item_id"], row["error"]) for row in batch.failures] == [
        ("z", "llm missing: the reply left this item out (asked alone)")
    ]


def test_a_server_that_answers_only_the_first_item_loses_none() -> None:
    """A server that does not enforce the schema and answers one item per reply: the items left out
    are asked again in smaller groups, down to one each, until every item has its answer."""

    def responder(body: dict[str, Any]) -> dict[str, Any]:
        return answer([1])

    ids = [f"i{k}" for k in range(8)]
    with FakeOpenAIServer(model_names=("test-model",), responder=responder) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url), cache=None) as client:
            batch = run_grouped(_ctx(client), SHAPE, [ids], _render)
            sizes = sorted(len(listed(r.body)) for r in server.chat_requests())
    assert sorted(batch.values) == ids and batch.failures == []
    assert sizes[-1] == 8 and sizes.count(1) >= 1 and len(sizes) == 8  # one answer a request, none lost


def test_the_schema_sent_fixes_the_number_of_answers_and_each_number() -> None:
    with FakeOpenAIServer(model_names=("test-model",)) as server:  # answers from the schema it is sent
        with OpenAICompatibleClient(fast_llm_settings(server.url), cache=None) as client:
            batch = run_grouped(_ctx(client), SHAPE, [["a", "b", "c"]], _render)
            [request] = server.chat_requests()
    items = request.body["response_format"]["json_schema"]["schema"]["properties"]["items"]
    assert (items["minItems"], items["maxItems"], len(items["prefixItems"])) == (3, 3, 3)
    assert [p["properties"]["number"]["const"] for p in items["prefixItems"]] == [1, 2, 3]
    assert sorted(batch.values) == ["a", "b", "c"] and batch.failures == []
