"""Prompt tokens as the server computes them: the prefix it read from its cache is recorded, and
every stage's prompt starts with a part that is the same for every request of the stage."""

from __future__ import annotations

from typing import Any

from flows.stages import STAGES
from tasks.llm.client.http import cached_prompt_tokens
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.prompts import PLACEHOLDER, PROMPTS_DIR, SECTION_MARK
from tests.fixtures.grouped_requests import grouped_ctx, merge_shape, render_pairs
from tests.fixtures.llm_fixtures import fast_llm_settings
from tests.fixtures.openai_server import FakeOpenAIServer


def test_cached_tokens_are_read_from_either_server() -> None:
    vllm = {"usage": {"prompt_tokens": 900, "prompt_tokens_details": {"cached_tokens": 768}}}
    llama = {"usage": {"prompt_tokens": 900}, "timings": {"cache_n": 640, "prompt_n": 260}}
    assert cached_prompt_tokens(vllm, vllm["usage"]) == 768
    assert cached_prompt_tokens(llama, llama["usage"]) == 640
    assert cached_prompt_tokens({}, {"prompt_tokens": 900}) is None  # not said: unknown, not 0


def test_the_second_request_of_a_stage_reads_its_instructions_from_the_cache() -> None:
    with FakeOpenAIServer(model_names=("test-model",), prefix_cache=True) as server:
        settings = fast_llm_settings(server.url, concurrency=1)
        with OpenAICompatibleClient(settings, cache=None) as client:
            batch = run_grouped(grouped_ctx(client), merge_shape(), [["a", "b"], ["c", "d"]], render_pairs)
            bodies = [r.body for r in server.chat_requests()]
    first, second = sorted(batch.calls, key=lambda row: row["item_id"])
    assert first["cached_prompt_tokens"] == 0
    system_words = len(bodies[0]["messages"][0]["content"].split())
    assert second["cached_prompt_tokens"] >= system_words  # instructions and fields, then the items
    assert second["cached_prompt_tokens"] < second["prompt_tokens"]


def _system_part(text: str) -> str:
    parts = SECTION_MARK.split(text)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}.get("system", "")


def test_every_stage_prompt_starts_with_instructions_that_never_change() -> None:
    """No document value in a system part: requests of a stage share it byte for byte, so a server's
    prefix cache computes it once."""
    sent: dict[str, Any] = {}
    for stage in STAGES:
        for prompt_id in stage.prompts:
            name, _, version = prompt_id.partition("/")
            for path in sorted((PROMPTS_DIR / name).glob(f"{version}*.md")):
                system = _system_part(path.read_text("utf-8"))
                sent[path.name + " of " + prompt_id] = PLACEHOLDER.findall(system)
    assert sent and all(placeholders == [] for placeholders in sent.values()), sent
