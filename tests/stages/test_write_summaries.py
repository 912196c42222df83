"""summarize_hierarchy with an LLM (the fake server): the work, storyline and community summaries are
written from their numbered quotes, several per request; every written sentence keeps the quotes it
names, a number outside the item's quotes is dropped, and a summary whose reply cites nothing stays
extractive with a failures row."""

from __future__ import annotations

import re

import pandas as pd
import pyarrow as pa

from schemas.config import load_settings
from tasks.stage import StageContext
from tasks.summaries import summarize_hierarchy
from tasks.tables.io import read_frame
from tests.fixtures.hierarchy.llm import llm_client
from tests.fixtures.hierarchy.mini import contract_problems

DOC = "the_lighthouse_key"
ITEM = re.compile(r"^(\d+)\. (\S[^:]*): .*\((Q[^()]*)\)$", re.MULTILINE)
QUOTE = re.compile(r"^Q(\d+) ", re.MULTILINE)


def own_numbers(ranges: str) -> list[int]:
    """ "Q1-Q3, Q7" -> [1, 2, 3, 7]"""
    numbers = []
    for run in ranges.split(", "):
        first, _, last = run.partition("-")
        numbers += range(int(first[1:]), int((last or first)[1:]) + 1)
    return numbers


def written(prompt: str) -> dict:
    """Two sentences per item citing its first and last quotes (and a number the request does not
    show); the second item of a request cites only a number the request does not show."""
    total = len(QUOTE.findall(prompt))
    items = []
    for index, (number, _kind, ranges) in enumerate(ITEM.findall(prompt)):
        own = own_numbers(ranges)
        if index == 1:
            sentences = [{"text": "Nothing the quotes say.", "quotes": [total + 5]}]
        else:
            sentences = [
                {"text": "Margaret keeps the key.", "quotes": [own[0], total + 9]},
                {"text": "The storm comes.", "quotes": [own[-1]]},
            ]
        items.append({"number": int(number), "sentences": sentences})
    return {"items": items}


def _tables(workspace) -> dict[str, pd.DataFrame]:
    names = (
        "documents", "sections", "sentences", "embeddings", "entities", "mentions", "events",
        "interactions", "episodes", "storylines", "communities",
    )  # fmt: skip
    return {name: read_frame(workspace, name, DOC) for name in names}


def test_the_model_writes_summaries_that_point_to_their_quotes(sample_workspace):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    tables = _tables(sample_workspace)
    with llm_client(written) as (client, server):
        ctx = StageContext("summarize_hierarchy", DOC, settings, tables=tables, llm=client)
        out = summarize_hierarchy.run(ctx)
        requests = len(server.chat_requests())
    rows = {r["summary_id"]: r for r in out["summaries"]}
    levels = settings.summarize_hierarchy.llm_levels
    asked = [r for r in rows.values() if r["level"] in levels]
    assert requests < len(asked)  # several summaries a request
    assert all(r["method"] == "extractive" for r in rows.values() if r["level"] not in levels)
    quotes: dict[str, list[dict]] = {}
    for quote in sorted(out["summary_quotes"], key=lambda q: q["position"]):
        quotes.setdefault(quote["summary_id"], []).append(quote)
    claims = out["summary_claims"]
    assert claims and {c["summary_id"] for c in claims} == {
        i for i, r in rows.items() if r["method"] == "llm"
    }
    for claim in claims:
        own = quotes[claim["summary_id"]]
        assert set(claim["sentence_ids"]) <= {q["sentence_id"] for q in own}
        # the out-of-range number was dropped, the real first quote kept
        if claim["text"] == "Margaret keeps the key.":
            assert claim["sentence_ids"] == [own[0]["sentence_id"]]
    work = next(r for r in rows.values() if r["level"] == "work")
    assert work["method"] == "llm" and work["text"] == "Margaret keeps the key. The storm comes."
    # the item citing nothing it was shown stays extractive and is reported
    failed = {f["item_id"] for f in out["failures"]}
    assert failed and all(rows[i]["method"] == "extractive" for i in failed)
    assert out["llm_calls"] and all(c["stage"] == "summarize_hierarchy" for c in out["llm_calls"])
    frames = {
        "summaries": out["summaries"],
        "sentences": tables["sentences"][["sentence_id"]],
        "sections": tables["sections"][["section_id"]],
    }
    arrow = {k: pa.Table.from_pandas(pd.DataFrame(v), preserve_index=False) for k, v in frames.items()}
    assert contract_problems("summary_claims", claims, arrow) == []


def test_offline_there_are_no_claims(sample_workspace):
    assert read_frame(sample_workspace, "summary_claims", DOC).empty
    assert set(read_frame(sample_workspace, "summaries", DOC)["method"]) == {"extractive"}


def test_a_request_shows_each_quote_once_under_its_scene_heading(sample_workspace):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    tables = _tables(sample_workspace)
    with llm_client(written) as (client, server):
        ctx = StageContext("summarize_hierarchy", DOC, settings, tables=tables, llm=client)
        out = summarize_hierarchy.run(ctx)
        prompts = [r.body["messages"][-1]["content"] for r in server.chat_requests()]
    quoted = {}
    for quote in out["summary_quotes"]:
        quoted.setdefault(quote["summary_id"], set()).add(quote["sentence_id"])
    shared = sum(len(a & b) for i, a in enumerate(quoted.values()) for b in list(quoted.values())[i + 1 :])
    assert shared  # the work and its storylines quote some of the same sentences
    for prompt in prompts:
        block = prompt.split("Quotes:\n", 1)[1].split("\n\nItems:\n", 1)[0]
        lines = block.splitlines()
        headings = [line for line in lines if line.startswith("[")]
        quotes = [line.split(" ", 1)[1] for line in lines if QUOTE.match(line)]
        assert lines[0].startswith("[") and len(headings) + len(quotes) == len(lines)
        assert len(set(quotes)) == len(quotes)  # each quote once, whichever items share it
        # a heading never follows itself: each one opens a run of quotes from another scene
        assert all(a != b for a, b in zip(headings, headings[1:]))
        assert len(headings) < len(quotes)
        # every item names its quotes by number, all of them shown above
        for _number, _kind, ranges in ITEM.findall(prompt):
            assert max(own_numbers(ranges)) <= len(quotes)
