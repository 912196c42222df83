"""A grouped request through llama.cpp's llguidance: the schema fixes how many answers come back and
each one's number, so the real model answers every item; the server's prefix cache is recorded."""

from __future__ import annotations

from types import SimpleNamespace

from schemas.config import load_settings
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.llm.requests.grouped import run_grouped
from tasks.llm.requests.shapes import SHAPES
from tests.real_llm.conftest import CONFIG

PAIRS = [
    ("Tom Hale", "a fisherman who keeps the ferry ticket", "Tom", "the fisherman on the night ferry"),
    ("Nia", "the ferry's cook", "Nia Vos", "a cook aboard the ferry"),
    ("the ferry", "a night boat across the bay", "Harbour Office", "where tickets are sold"),
    ("Captain Ree", "the ferry's captain", "Ree", "the captain, who checks tickets"),
    ("the ticket", "a paper ticket for the crossing", "Tom Hale", "a fisherman"),
]


def _render(ids: list[str]) -> dict[str, str]:
    records = "\n".join(f"R{i}a {a} - {da}\nR{i}b {b} - {db}" for i, (a, da, b, db) in enumerate(PAIRS))
    pairs = "\n".join(f"{n}. R{i}a and R{i}b" for n, i in enumerate(ids, 1))
    return {"title": "The Ferry Ticket", "language": "en", "records": records, "pairs": pairs}


def test_every_item_of_a_group_is_answered_and_the_second_request_reads_the_cache(local_server):
    server = {"url": local_server.url, "model": local_server.options.alias}
    # one request at a time: llama.cpp keeps a prompt per slot, so the second request finds the first's
    settings = load_settings(CONFIG, overrides={"llm": {**server, "concurrency": 1}})
    document = SimpleNamespace(language="en")
    ctx = SimpleNamespace(stage="canonicalize_entities", doc_id="ferry", document=document, settings=settings)
    with OpenAICompatibleClient(settings.llm, cache=None) as client:
        ctx.llm = client
        batch = run_grouped(ctx, SHAPES["canonicalize_entities"], [["0", "1", "2"], ["3"]], _render)
    assert sorted(batch.values) == ["0", "1", "2", "3"] and batch.failures == [], batch.failures
    first_requests = [row for row in batch.calls if row["attempt"] == 0]
    assert len(first_requests) == 2  # one request per group, none asked again
    assert all(row["cached_prompt_tokens"] is not None for row in first_requests)
    assert max(row["cached_prompt_tokens"] for row in first_requests) > 0  # the instructions, once
