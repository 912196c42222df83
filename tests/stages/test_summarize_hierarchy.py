"""summarize_hierarchy on the bundled samples, built through the real stages: every level of the
hierarchy is there, every quote is a sentence of the source at its span, in story order, the first
quotes by rank are a shorter summary, the same input gives the same tables, and only a settings
change of the stage rebuilds it."""

from __future__ import annotations

import pandas as pd
import pytest

from flows.build.corpus import build
from schemas.config import load_settings
from tasks.summaries.summarize_hierarchy import summarize_document
from tasks.tables.io import Workspace, read_frame
from tests.conftest import SCREENPLAY

DOCS = ("the_lighthouse_key", "the_fisherman_and_his_wife")


def _tables(workspace: Workspace, doc_id: str) -> dict[str, pd.DataFrame]:
    names = (
        "documents", "sections", "sentences", "embeddings", "entities", "mentions", "events",
        "interactions", "episodes", "storylines", "communities",
    )  # fmt: skip
    return {name: read_frame(workspace, name, doc_id) for name in names}


@pytest.mark.parametrize("doc_id", DOCS)
def test_every_level_of_the_hierarchy_is_summarized(sample_workspace, doc_id):
    summaries = read_frame(sample_workspace, "summaries", doc_id)
    salience = read_frame(sample_workspace, "sentence_salience", doc_id)
    storylines = read_frame(sample_workspace, "storylines", doc_id)
    communities = read_frame(sample_workspace, "communities", doc_id)
    levels = summaries.groupby("level")["subject_id"].agg(list).to_dict()
    assert levels["work"] == [doc_id]
    summarized = set(salience["episode_id"].dropna())  # episodes holding a sentence
    assert set(levels["episode"]) == summarized and summarized
    assert sorted(levels.get("storyline", [])) == sorted(storylines["storyline_id"])
    assert sorted(levels.get("community", [])) == sorted(communities["community_id"])
    trunk_first = summaries[summaries["level"] == "storyline"].sort_values("ordinal")
    assert trunk_first["origin"].tolist() == storylines.sort_values("ordinal")["origin"].tolist()


@pytest.mark.parametrize("doc_id", DOCS)
def test_every_quote_is_a_source_sentence_in_story_order(sample_workspace, doc_id):
    text = read_frame(sample_workspace, "documents", doc_id)["text"].iloc[0]
    sentences = read_frame(sample_workspace, "sentences", doc_id).set_index("sentence_id")
    quotes = read_frame(sample_workspace, "summary_quotes", doc_id)
    summaries = read_frame(sample_workspace, "summaries", doc_id).set_index("summary_id")
    assert len(quotes) == summaries["n_quotes"].sum()
    for quote in quotes.itertuples():
        sentence = sentences.loc[quote.sentence_id]
        assert quote.text == sentence["text"] and quote.section_id == sentence["section_id"]
        assert (quote.char_start, quote.char_end) == (sentence["char_start"], sentence["char_end"])
        assert text[quote.char_start : quote.char_end].split() == quote.text.split()
    for summary_id, group in quotes.groupby("summary_id"):
        group = group.sort_values("position")
        assert group["char_start"].is_monotonic_increasing
        assert summaries.loc[summary_id, "sentence_ids"].tolist() == group["sentence_id"].tolist()
        assert sorted(group["rank"]) == list(range(1, len(group) + 1))


def test_the_work_summary_covers_the_story_and_leaves_out_the_front_matter(sample_workspace):
    doc_id = "the_lighthouse_key"
    salience = read_frame(sample_workspace, "sentence_salience", doc_id).set_index("sentence_id")
    sections = read_frame(sample_workspace, "sections", doc_id)
    work = read_frame(sample_workspace, "summaries", doc_id).query("level == 'work'").iloc[0]
    assert not salience.loc[list(work["sentence_ids"]), "is_front_matter"].any()
    scenes = sections[sections["section_kind"] == "scene"]
    # Quotes from the opening scenes to the last ones: the whole story, not its busiest stretch.
    assert work["first_ordinal"] <= scenes["ordinal"].min() + 1
    assert work["last_ordinal"] >= scenes["ordinal"].max() - 1
    assert work["n_words"] >= load_settings().summarize_hierarchy.work_words or work["n_quotes"] == len(
        salience[~salience["is_front_matter"]]
    )


def test_the_title_line_of_a_markdown_story_is_never_quoted(sample_workspace):
    doc_id = "the_fisherman_and_his_wife"
    title = read_frame(sample_workspace, "documents", doc_id)["title"].iloc[0]
    sentences = read_frame(sample_workspace, "sentences", doc_id).sort_values("char_start")
    heading = sentences.iloc[0]
    assert heading["text"].lstrip("# ") == title  # the file's first line, "# <title>", is a sentence
    salience = read_frame(sample_workspace, "sentence_salience", doc_id).set_index("sentence_id")
    assert bool(salience.loc[heading["sentence_id"], "is_front_matter"])
    quoted = read_frame(sample_workspace, "summary_quotes", doc_id)
    assert heading["sentence_id"] not in set(quoted["sentence_id"])
    assert not quoted["text"].str.startswith("#").any()
    work = read_frame(sample_workspace, "summaries", doc_id).query("level == 'work'").iloc[0]
    assert not work["text"].startswith(("#", title))


def test_the_same_input_gives_the_same_summaries(sample_workspace):
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}}).summarize_hierarchy
    tables = _tables(sample_workspace, "the_lighthouse_key")
    first = summarize_document("the_lighthouse_key", "The Lighthouse Key", "en", tables, settings)
    second = summarize_document("the_lighthouse_key", "The Lighthouse Key", "en", tables, settings)
    assert first["summaries"] == second["summaries"] and first["summary_quotes"] == second["summary_quotes"]
    stored = read_frame(sample_workspace, "summaries", "the_lighthouse_key")
    assert sorted(stored["summary_id"]) == sorted(r["summary_id"] for r in first["summaries"])


def test_a_shorter_budget_is_the_first_quotes_by_rank(sample_workspace):
    tables = _tables(sample_workspace, "the_lighthouse_key")
    settings = load_settings().summarize_hierarchy
    long = summarize_document("the_lighthouse_key", "t", "en", tables, settings)
    short = summarize_document(
        "the_lighthouse_key", "t", "en", tables, settings.model_copy(update={"work_words": 80})
    )

    def work_ranked(output):
        work = next(r["summary_id"] for r in output["summaries"] if r["level"] == "work")
        quotes = sorted(
            (q for q in output["summary_quotes"] if q["summary_id"] == work), key=lambda q: q["rank"]
        )
        return [q["sentence_id"] for q in quotes]

    assert work_ranked(long)[: len(work_ranked(short))] == work_ranked(short)


def test_only_a_change_of_its_settings_rebuilds_the_summaries(tmp_path):
    workspace = Workspace.at(tmp_path / "ws")
    for number, words in enumerate((600, 600, 300)):
        settings = load_settings(
            overrides={"embed_texts": {"backend": "hashing"}, "summarize_hierarchy": {"work_words": words}}
        )
        report = build([str(SCREENPLAY)], workspace, settings, quiet=True)
        outcome = {o.stage: o.status for o in report.documents[0].outcomes}
        assert report.ok, outcome
        built = {stage for stage, status in outcome.items() if status == "built"}
        assert built == ({"summarize_hierarchy"} if number == 2 else set() if number else set(outcome))
    work = read_frame(workspace, "summaries", "the_lighthouse_key").query("level == 'work'").iloc[0]
    assert 300 <= work["n_words"] < 600
