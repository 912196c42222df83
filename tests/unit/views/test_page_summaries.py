"""The view's summaries: work and storyline summaries in story order, each sentence with its scenes
(a model's written sentences where a summary has them, else its quotes), linked to the DAG's
storylines; a bundle without them leaves the section out."""

from __future__ import annotations

import pandas as pd

from tasks.views.bundle import Bundle
from tasks.views.html import SECTIONS, shown_sections
from tasks.views.page_data import summaries, summary_sentences


def _summary(summary_id: str, level: str, ordinal: int, subject_id: str, method: str = "extractive") -> dict:
    origin = "branch" if level == "storyline" else None
    return {
        "summary_id": summary_id, "level": level, "ordinal": ordinal, "subject_id": subject_id,
        "origin": origin, "title": f"title of {summary_id}", "method": method,
    }  # fmt: skip


def _quote(summary_id: str, position: int, section_id: str, text: str) -> dict:
    return {"summary_id": summary_id, "position": position, "section_id": section_id, "text": text}


def _bundle(rows: list[dict], quotes: list[dict], claims: list[dict] | None = None) -> Bundle:
    storylines = pd.DataFrame({"storyline_id": ["sto_b", "sto_a"], "ordinal": [2, 1], "name": ["B", "A"]})
    claim_columns = ["summary_id", "position", "section_ids", "text"]
    return Bundle(
        "doc",
        {
            "summaries": pd.DataFrame(rows, columns=list(_summary("x", "work", 1, "doc"))),
            "summary_quotes": pd.DataFrame(quotes, columns=["summary_id", "position", "section_id", "text"]),
            "summary_claims": pd.DataFrame(claims or [], columns=claim_columns),
            "storylines": storylines,
        },
    )


def test_work_then_storylines_in_story_order_with_each_sentence_scene():
    rows = [
        _summary("s_late", "storyline", 2, "sto_b"),
        _summary("w", "work", 1, "doc"),
        _summary("s_early", "storyline", 1, "sto_a"),
        _summary("e", "episode", 1, "epi_1"),  # episodes are not shown
    ]
    quotes = [
        _quote("w", 2, "sec_2", "Then the  storm\ncame."),
        _quote("w", 1, "sec_1", "It began."),
        _quote("s_early", 1, "sec_1", "It began."),
        _quote("s_late", 1, "sec_2", "Then the storm came."),
    ]
    data = summaries(_bundle(rows, quotes))
    assert data["work"]["sentences"] == [
        {"text": "It began.", "scenes": ["sec_1"]},
        {"text": "Then the storm came.", "scenes": ["sec_2"]},  # whitespace of the source folded
    ]
    assert [s["id"] for s in data["storylines"]] == ["s_early", "s_late"]
    # `storyline` indexes the storylines as the DAG orders them (by ordinal): sto_a first.
    assert [s["storyline"] for s in data["storylines"]] == [0, 1]
    assert data["storylines"][0]["origin"] == "branch" and data["work"]["origin"] == ""


def test_written_sentences_replace_the_quotes_and_name_every_scene_they_rest_on():
    rows = [_summary("w", "work", 1, "doc", method="llm"), _summary("s", "storyline", 1, "sto_a")]
    quotes = [_quote("w", 1, "sec_1", "q1"), _quote("w", 2, "sec_3", "q2"), _quote("s", 1, "sec_1", "q1")]
    claims = [
        {"summary_id": "w", "position": 1, "section_ids": ["sec_1", "sec_3", "sec_1"], "text": "All of it."}
    ]
    sentences = summary_sentences(_bundle(rows, quotes, claims)["summary_quotes"], pd.DataFrame(claims))
    assert sentences["w"] == [{"text": "All of it.", "scenes": ["sec_1", "sec_3"]}]
    assert sentences["s"] == [{"text": "q1", "scenes": ["sec_1"]}]  # no claims: its quotes
    assert summaries(_bundle(rows, quotes, claims))["work"]["method"] == "llm"


def test_a_bundle_without_work_or_storyline_summaries_leaves_the_section_out():
    only_episodes = _bundle([_summary("e", "episode", 1, "epi_1")], [_quote("e", 1, "sec_1", "q")])
    for bundle in (_bundle([], []), only_episodes):
        data = {"summaries": summaries(bundle)}
        assert data["summaries"] is None
        assert "summaries" not in [s.id for s in shown_sections(data)]
    full = {"summaries": summaries(_bundle([_summary("w", "work", 1, "doc")], [_quote("w", 1, "s", "q")]))}
    assert [s.id for s in shown_sections(full)] == [s.id for s in SECTIONS]
