"""read_scope and answer_words: a whole-story question is told apart from one about a moment, and
gets a paragraph; everything else keeps its short answer."""

from __future__ import annotations

import pytest

from schemas.config import AnswerSettings
from tasks.query.question_scope import answer_words, read_scope


@pytest.mark.parametrize(
    "question, kind",
    [
        ("What is the plot of the story?", "work"),
        ("这部电影讲了什么？", "work"),
        ("Who is Hank Arapoulous, and what does he do in the story?", "character"),
        ("Who is Ellen and how does she affect Thig and his choices?", "character"),
        ("What happens to Betty throughout the story", "character"),
        ("What is the relationship between Hathaway and Marnagan in the story?", "relationship"),
        ("How does Wayne interact with the story’s other characters?", "relationship"),
        ("Describe the setting of the story.", "setting"),
        ("How does this society seek to deal with violence?", "theme"),
        ("What is Lovenbroy, and why is it important?", "theme"),
        ("How is slang used in the story?", "theme"),
    ],
)
def test_whole_story_questions(question, kind):
    assert read_scope(question).kind == kind


@pytest.mark.parametrize(
    "question",
    [
        "Who hides the brass key in the van?",
        "What happened at the end of the story?",
        "What pivotal event initiates the shift in John and Nadia's relationship, leading to their move?",
        "How does the relationship between Clay and John evolve from their first meeting to the rooftop?",
        "In 33、INT STUDIO - NIGHT, what does Holden realize that changes their relationship?",
        "Who are the 3 most central characters in this story?",
        "在[寺庙，日，外]这一场里，推动剧情发展的核心动作是什么？",
        "Why does Joe hire the girl?",
    ],
)
def test_questions_about_one_place_or_a_short_fact_stay_local(question):
    assert not read_scope(question).is_global


def test_answer_length_fits_the_question():
    settings = AnswerSettings(work_answer_words=400, aspect_answer_words=200)
    assert answer_words("What is the plot of the story?", None, settings) == 400
    assert answer_words("Describe the setting of the story.", None, settings) == 200
    assert answer_words("Who hides the brass key in the van?", None, settings) is None
    assert answer_words("What is the plot of the story?", ["a", "b"], settings) is None  # options: choose one
