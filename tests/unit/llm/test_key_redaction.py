"""A server that echoes the request (its Authorization header) into its replies never gets the API
key into a value, an `llm_calls` row, a `failures` row, the LLM cache or the log."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest

from schemas.responses.base import LLMCheckReply
from tasks.llm.client.cache import LLMCache
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.client.protocol import LLMRequest
from tasks.llm.client.replies import redact_text
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import AUTH_ECHO, FakeOpenAIServer

SECRET = "not-an-sk-key-but-a-secret-9f8e7d"  # no sk- prefix: only the exact key finds it


def _request(item_id: str) -> LLMRequest:
    return LLMRequest(
        stage="extract_graph",
        item_id=item_id,
        doc_id="d-1",
        prompt_id="extract_graph/v1",
        prompt_hash="h",
        messages=({"role": "user", "content": item_id},),
    )


def _tree_text(root: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in root.rglob("*") if p.is_file())


def test_an_echoed_key_reaches_no_value_row_cache_or_log(tmp_path: Path, caplog: Any) -> None:
    def responder(body: dict[str, Any]) -> str:
        said = body["messages"][1]["content"]  # the item (after the system message of fields)
        if said == "escaped":  # the key spelled with JSON escapes, which a plain replace misses
            escaped = "".join(f"\\u{ord(c):04x}" for c in f"Bearer {SECRET}")
            return '{"ok": true, "echo": "' + escaped + '"}'
        if said == "broken":  # invalid, so the reply text ends in a failures row
            return f"not json: {AUTH_ECHO}"
        return json.dumps({"ok": True, "echo": f"you sent {AUTH_ECHO}"})

    caplog.set_level(logging.DEBUG)
    cache = LLMCache(tmp_path / "cache")
    with FakeOpenAIServer(responder=responder, echo_auth=True, api_key=SECRET) as server:
        with OpenAICompatibleClient(fast_llm_settings(server.url), api_key=SECRET, cache=cache) as client:
            plain = client.structured(_request("plain"), LLMCheckReply)
            escaped = client.structured(_request("escaped"), LLMCheckReply)
            broken = client.structured(_request("broken"), LLMCheckReply)
            cached = client.structured(_request("plain"), LLMCheckReply)
    assert plain.status == "ok" and escaped.status == "ok" and cached.status == "cached"
    assert plain.value.echo == "you sent Bearer ***" and "***" in escaped.value.echo
    assert broken.value is None
    stored = [
        plain.value.model_dump_json(),
        escaped.value.model_dump_json(),
        cached.value.model_dump_json(),
        json.dumps([plain.calls, escaped.calls, broken.calls], default=str),
        json.dumps(broken.failure_row()),
        plain.raw or "",
        _tree_text(tmp_path / "cache"),
        caplog.text,
    ]
    assert len(cache) == 2 and "Bearer ***" in broken.failure_row()["payload"]
    assert not [text for text in stored if SECRET in text]


@pytest.mark.parametrize(
    "text",
    [f"key {SECRET} here", json.dumps({"a": [f"x{SECRET}y"]}), json.dumps({"a": SECRET}, ensure_ascii=False)],
)
def test_redact_text_removes_the_key_however_it_is_written(text: str) -> None:
    escaped = text.replace(SECRET[:4], "".join(f"\\u{ord(c):04x}" for c in SECRET[:4]))
    for variant in (text, escaped):
        cleaned = redact_text(variant, SECRET)
        assert SECRET not in cleaned
        if variant.startswith("{"):  # still JSON, and no escape spells the key either
            assert SECRET not in json.dumps(json.loads(cleaned), ensure_ascii=False)
