"""Whole-story questions with an LLM configured, against the test OpenAI server: the model writes the
answer from the summary hierarchy's numbered quotes (answer_global/v1, the fixed WrittenAnswer reply),
part by part in story order, not through the short-answer reader; a sentence naming no quote is
dropped, each kept one is cited with its quotes' scenes; an unusable reply or a failed call, for any
part, gives the offline answer labelled offline, with a failures row."""

from __future__ import annotations

import re

import pytest

from flows.answer_questions import QueryEngine
from schemas.config import load_settings
from tasks.embeddings import HashingEmbedder
from tasks.llm.client.factory import build_llm_client
from tasks.query.answer_global_llm import GLOBAL_PROMPT, reply_tokens, story_parts
from tasks.text import count_words
from tests.fixtures.llm_fixtures import TEST_MODEL
from tests.fixtures.openai_server import FakeOpenAIServer

DOC = "the_lighthouse_key"
PLOT = "What is the plot of the story?"
QUOTE = re.compile(r"^Q(\d+) \([^\n]*?\): (.+)$", re.MULTILINE)
PART = re.compile(r"Part (\d+) of (\d+) of the story\. Length: about (\d+) words")


def _schema_name(body: dict) -> str:
    return ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")


def _quotes(body: dict) -> dict[int, str]:
    """The numbered quotes of a WrittenAnswer request (one part): number -> text."""
    return {int(n): text for n, text in QUOTE.findall(body["messages"][-1]["content"])}


def retelling(body: dict) -> dict:
    """The fake model's answer to one part: one sentence per pair of its quotes (the first one's first
    six words, retold), citing both; and one sentence citing a quote the part does not have."""
    quotes = _quotes(body)
    sentences = [
        {"text": f"In the story, {' '.join(quotes[n].split()[:6])}.", "quotes": [n, n + 1]}
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


def test_the_model_writes_the_plot_part_by_part_from_the_numbered_quotes_each_sentence_citing_its_scenes(
    sample_workspace, server
):
    offline = _engine(sample_workspace, None).ask(DOC, PLOT)
    scene_of = {" ".join(c.quote.split()): c.ordinal for c in offline.citations}  # each quote's scene
    server.responder = lambda body: retelling(body) if _schema_name(body) == "WrittenAnswer" else None
    engine = _engine(sample_workspace, server.url)
    answer = engine.ask(DOC, PLOT)
    names = [_schema_name(r.body) for r in server.chat_requests()]
    assert not [n for n in names if n.startswith("ReaderReply") or n == "SkillChoice"]  # no short answer
    bodies = [r.body for r in server.chat_requests() if _schema_name(r.body) == "WrittenAnswer"]
    bodies.sort(key=lambda b: int(PART.search(b["messages"][-1]["content"]).group(1)))  # sent at once
    parts = [PART.search(b["messages"][-1]["content"]).groups() for b in bodies]
    (summary,) = [t for t in answer.trace if t["tool"] == "summary_search"]
    words = engine.settings.answer.work_answer_words
    # the same call and word budget as offline; its quotes asked in consecutive parts, each once
    assert summary["arguments"]["words"] == words
    quotes = [q for b in bodies for q in _quotes(b).values()]
    assert len(quotes) == summary["rows"] >= 10 and len(bodies) >= 2
    assert quotes == list(scene_of)  # the offline answer's quotes, in story order across the parts
    assert len(bodies) == len(story_parts([count_words(text, "en") for text in quotes]))
    assert [(int(n), int(total)) for n, total, _ in parts] == [
        (n, len(bodies)) for n in range(1, len(bodies) + 1)
    ]
    assert abs(sum(int(share) for *_, share in parts) - words) <= len(bodies)  # shares of the budget
    for body, (*_, share) in zip(bodies, parts):
        assert PLOT not in body["messages"][0]["content"] and PLOT in body["messages"][-1]["content"]
        assert body.get("max_completion_tokens", body.get("max_tokens")) == reply_tokens(int(share))
    # kept: every sentence citing a real quote of its part, in story order; the others dropped
    kept = [
        (s, _quotes(b))
        for b in bodies
        for s in retelling(b)["sentences"]
        if s["quotes"][0] <= len(_quotes(b))
    ]
    assert not answer.is_offline and answer.answer_kind == "summary"
    assert answer.answer == " ".join(s["text"] for s, _ in kept)
    assert len(answer.citations) == len(kept)
    for citation, (sentence, numbered) in zip(answer.citations, kept):
        cited = [numbered[n] for n in sentence["quotes"] if n in numbered]
        assert citation.ordinals == tuple(sorted({scene_of[text] for text in cited}))
        assert citation.ordinal == citation.ordinals[0] and citation.quote.startswith(cited[0][:40])
    assert any(len(c.ordinals) == 2 for c in answer.citations)  # a pair of quotes across two scenes
    assert [c["prompt_id"] for c in answer.llm_calls].count(GLOBAL_PROMPT) == len(bodies)
    assert not answer.failures
    assert answer.notes[0] == (
        f"llm answer written from {len(quotes)} quote(s) of the summary hierarchy in {len(bodies)} part(s): "
        f"{len(kept)} sentence(s) kept, 0 repeated and {len(bodies)} unknown quote number(s) dropped"
    )


def test_an_unusable_reply_or_a_failed_call_gives_the_offline_answer_labelled_offline(
    sample_workspace, server
):
    offline = _engine(sample_workspace, None).ask(DOC, PLOT)

    def second_part_cites_nothing(body: dict) -> dict | None:
        if _schema_name(body) != "WrittenAnswer":
            return None
        if PART.search(body["messages"][-1]["content"]).group(1) == "2":
            return {"sentences": [{"text": "A sentence citing nothing real.", "quotes": [0]}]}
        return retelling(body)

    server.responder = second_part_cites_nothing
    engine = _engine(sample_workspace, server.url)
    answer = engine.ask(DOC, PLOT)
    assert answer.is_offline and answer.answer == offline.answer and answer.answer_kind == "summary"
    assert [c.quote for c in answer.citations] == [c.quote for c in offline.citations]
    assert answer.notes[0].startswith(
        "LLM answer failed (part 2: invalid: none of 1 sentence(s) names one of"
    )
    (failure,) = [f for f in answer.failures if ":global" in f["item_id"]]
    assert failure["item_id"].endswith(":global2") and failure["error"].startswith("llm invalid answer")
    assert GLOBAL_PROMPT in failure["payload"]

    server.responder = lambda body: "not json at all" if _schema_name(body) == "WrittenAnswer" else None
    answer = engine.ask(DOC, "Who is Nia, and what does she do in the story?")
    assert answer.is_offline and answer.answer_kind == "summary" and "NIA" in answer.answer.upper()
    assert answer.notes[0].startswith("LLM answer failed (part 1: invalid")
    failures = [f for f in answer.failures if ":global" in f["item_id"]]
    assert failures and {f["stage"] for f in failures} == {"answer"}
