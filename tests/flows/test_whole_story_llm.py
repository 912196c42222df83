"""Whole-story questions with an LLM configured, against the test OpenAI server: the model writes the
answer from the summary hierarchy's numbered quotes (answer_global/v1, the fixed WrittenAnswer reply),
not through the short-answer reader; a sentence naming no quote is dropped, each kept one is cited with
its quotes' scenes; an unusable reply or a failed call gives the offline answer labelled offline, with
a failures row."""

from __future__ import annotations

import re

import pytest

from flows.answer_questions import QueryEngine
from schemas.config import load_settings
from tasks.embeddings import HashingEmbedder
from tasks.llm.client.factory import build_llm_client
from tasks.query.answer_global_llm import GLOBAL_PROMPT, reply_tokens
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer

DOC = "the_lighthouse_key"
PLOT = "What is the plot of the story?"
QUOTE = re.compile(r"^Q(\d+) \[(\d+)\] [^\n]*?: (.+)$", re.MULTILINE)


def _schema_name(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def _quotes(body: dict) -> dict[int, tuple[int, str]]:
    """The numbered quotes of a WrittenAnswer request: number -> (scene ordinal, text)."""
    user = body["messages"][-1]["content"]
    return {int(n): (int(ordinal), text) for n, ordinal, text in QUOTE.findall(user)}


def retelling(body: dict) -> dict:
    """The fake model's answer: one sentence per pair of quotes (its first six words, retold), citing
    both; and one sentence citing a quote that does not exist."""
    quotes = _quotes(body)
    sentences = [
        {"text": f"In the story, {' '.join(quotes[n][1].split()[:6])}.", "quotes": [n, n + 1]}
        for n in range(1, len(quotes), 2)
    ]
    sentences.insert(1, {"text": "Something no quote says happens.", "quotes": [len(quotes) + 5]})
    return {"sentences": sentences}


@pytest.fixture
def server():
    with FakeOpenAIServer(model_names=(TEST_MODEL,)) as fake:
        yield fake


def _engine(sample_workspace, url: str | None) -> QueryEngine:
    overrides = {"embed_texts": {"backend": "hashing"}}
    if url:
        overrides["llm"] = {"url": url, "model": TEST_MODEL, "max_tokens": 256, "max_retries": 0}
    settings = load_settings(overrides=overrides)
    llm = build_llm_client(settings.llm, None, None) if url else None
    return QueryEngine(sample_workspace, settings, embedder_factory=lambda _: HashingEmbedder(384), llm=llm)


def test_the_model_writes_the_plot_from_the_numbered_quotes_each_sentence_citing_its_scenes(
    sample_workspace, server
):
    server.responder = lambda body: retelling(body) if _schema_name(body) == "WrittenAnswer" else None
    engine = _engine(sample_workspace, server.url)
    answer = engine.ask(DOC, PLOT)
    written = [r.body for r in server.chat_requests() if _schema_name(r.body) == "WrittenAnswer"]
    names = [_schema_name(r.body) for r in server.chat_requests()]
    assert len(written) == 1 and not [n for n in names if n.startswith("ReaderReply") or n == "SkillChoice"]
    body = written[0]
    quotes = _quotes(body)
    summary = [t for t in answer.trace if t["tool"] == "summary_search"]
    words = engine.settings.answer.work_answer_words
    # the same call and word budget as offline: every quote it found is numbered in the prompt
    assert len(summary) == 1 and summary[0]["arguments"]["words"] == words
    assert len(quotes) == summary[0]["rows"] >= 5
    assert f"about {words} words" in body["messages"][-1]["content"]
    assert PLOT not in body["messages"][0]["content"] and PLOT in body["messages"][-1]["content"]
    assert body.get("max_completion_tokens", body.get("max_tokens")) == reply_tokens(words)
    # kept: every sentence citing a real quote, in the model's order; the one citing none is dropped
    kept = [s for s in retelling(body)["sentences"] if s["quotes"][0] <= len(quotes)]
    assert not answer.is_offline and answer.answer_kind == "summary"
    assert answer.answer == " ".join(s["text"] for s in kept)
    assert len(answer.citations) == len(kept)
    for citation, sentence in zip(answer.citations, kept):
        cited = [quotes[n] for n in sentence["quotes"] if n in quotes]
        assert citation.ordinals == tuple(sorted({ordinal for ordinal, _ in cited}))
        assert citation.ordinal == citation.ordinals[0] and citation.quote.startswith(cited[0][1][:40])
    assert any(len(c.ordinals) == 2 for c in answer.citations)  # a pair of quotes across two scenes
    assert [c["prompt_id"] for c in answer.llm_calls].count(GLOBAL_PROMPT) == 1
    assert not answer.failures and "1 dropped" in " ".join(answer.notes)


def test_an_unusable_reply_or_a_failed_call_gives_the_offline_answer_labelled_offline(
    sample_workspace, server
):
    offline = _engine(sample_workspace, None).ask(DOC, PLOT)
    server.responder = lambda body: (
        {"sentences": [{"text": "A sentence citing nothing real.", "quotes": [0]}]}
        if _schema_name(body) == "WrittenAnswer"
        else None
    )
    engine = _engine(sample_workspace, server.url)
    answer = engine.ask(DOC, PLOT)
    assert answer.is_offline and answer.answer == offline.answer and answer.answer_kind == "summary"
    assert [c.quote for c in answer.citations] == [c.quote for c in offline.citations]
    assert answer.notes[0].startswith("LLM answer failed (invalid: none of 1 sentence(s) names one of")
    (failure,) = [f for f in answer.failures if f["item_id"].endswith(":global")]
    assert failure["error"].startswith("llm invalid answer") and GLOBAL_PROMPT in failure["payload"]

    server.responder = lambda body: "not json at all" if _schema_name(body) == "WrittenAnswer" else None
    answer = engine.ask(DOC, "Who is Nia, and what does she do in the story?")
    assert answer.is_offline and answer.answer_kind == "summary" and "NIA" in answer.answer.upper()
    assert answer.notes[0].startswith("LLM answer failed (invalid")
    (failure,) = [f for f in answer.failures if f["item_id"].endswith(":global")]
    assert failure["stage"] == "answer"
