"""Whole-story questions on the bundled screenplay: NKW answers the plot with a paragraph from the
summary hierarchy that follows the story in order, each sentence cited with its scene; the hybrid
baselines answer at the same length; a local question keeps its short answer."""

from __future__ import annotations

import pytest

from flows.answer_questions import QueryEngine
from schemas.config import load_settings
from tasks.embeddings import HashingEmbedder

DOC = "the_lighthouse_key"


@pytest.fixture(scope="module")
def engine(sample_workspace) -> QueryEngine:
    settings = load_settings(overrides={"embed_texts": {"backend": "hashing"}})
    return QueryEngine(sample_workspace, settings, embedder_factory=lambda _: HashingEmbedder(384))


def test_the_plot_is_a_paragraph_that_follows_the_story_with_a_scene_for_each_sentence(engine):
    answer = engine.ask(DOC, "What is the plot of the story?")
    words = engine.settings.answer.work_answer_words
    assert answer.answer_kind == "summary" and answer.is_offline
    assert len(answer.answer.split()) >= words
    # every sentence of the paragraph is a cited quote, in the order of the answer and of the story
    assert " ".join(c.quote.strip() for c in answer.citations) == answer.answer
    ordinals = [c.ordinal for c in answer.citations]
    assert ordinals == sorted(ordinals) and len(set(ordinals)) >= 5
    assert [t["tool"] for t in answer.trace].count("summary_search") == 1
    assert answer.intents["scope"] == "work"


def test_a_character_question_quotes_the_character(engine):
    answer = engine.ask(DOC, "Who is Nia, and what does she do in the story?")
    assert answer.answer_kind == "summary"
    assert "NIA" in answer.answer.upper()
    assert len(answer.answer.split()) >= engine.settings.answer.aspect_answer_words


@pytest.mark.parametrize("system", ["hybrid", "hybrid_fine"])
def test_the_baselines_answer_at_the_same_length(engine, system):
    ours = engine.ask(DOC, "What is the plot of the story?")
    theirs = engine.ask(DOC, "What is the plot of the story?", system=system)
    words = engine.settings.answer.work_answer_words
    assert len(theirs.answer.split()) >= words or len(theirs.answer.split()) >= len(ours.answer.split())
    short = engine.ask(DOC, "Who hides the brass key in the van?", system=system)
    assert len(short.answer.split()) < 60


def test_a_local_question_keeps_its_short_answer(engine):
    answer = engine.ask(DOC, "Who hides the brass key in the van?")
    assert answer.answer_kind != "summary" and len(answer.answer.split()) < 60
    assert "summary_search" not in [t["tool"] for t in answer.trace]
