"""Short answers of the asked type from sentences of the bundled samples: who, where, when, why,
how (means and feeling), what-did-X-do and what, each with its supporting quote, and the labelled
fall back to the whole sentence."""

from __future__ import annotations

import pytest

from tasks.query.question_form import read_question
from tasks.query.short_answers.choose import Candidate, short_answer

HOVEL = (
    "Once upon a time there was a poor fisherman who lived with his wife in a miserable hovel "
    "close by the sea."
)
HEAVY = "The fisherman's heart was heavy, and he did not want to go."
KEY = "He drops the brass key inside, snaps the lid shut, and shoves the tin deep into the glovebox."
ENTITIES = {"Tom Hale": "character", "Margaret Hale": "character", "Harbour Office": "location"}


def find(text: str) -> list[tuple[int, int, str, str]]:
    found = []
    for surface, (name, kind) in {
        "Tom": ("Tom Hale", "character"),
        "Margaret": ("Margaret Hale", "character"),
        "harbour office": ("Harbour Office", "location"),
    }.items():
        start = text.lower().find(surface.lower())
        if start >= 0:
            found.append((start, start + len(surface), name, kind))
    return found


def answer(question: str, *texts: str, **fields):
    candidates = [Candidate(t, f"sec-{i}", 1.0 - 0.01 * i, **fields) for i, t in enumerate(texts)]
    return short_answer(question, read_question(question), candidates, find)


@pytest.mark.parametrize(
    "question, texts, fields, expected, kind",
    [
        ("Who hides the brass key in the van?", [KEY], {"actor": "Tom Hale"}, "Tom Hale", "who"),
        (
            "Who radios the harbour office?",
            ["Margaret radios the harbour office from the gallery."],
            {},
            "Margaret Hale",
            "who",
        ),
        (
            "Where did the fisherman and his wife live?",
            [HOVEL],
            {},
            "in a miserable hovel close by the sea",
            "where",
        ),
        (
            "Where does Ellis keep the warning?",
            ["Ellis keeps it."],
            {"location": "HARBOUR OFFICE"},
            "Harbour Office",
            "where",
        ),
        (
            "When did the fisherman come home?",
            ["Every evening he came home with whatever the water had given him."],
            {},
            "Every evening",
            "when",
        ),
        (
            "When does Margaret light the lamp?",
            ["Margaret lights the lamp."],
            {"time_of_day": "NIGHT"},
            "night",
            "when",
        ),
        (
            "Why did the fisherman let the flounder go?",
            ["He let the flounder go because it was an enchanted prince."],
            {},
            "it was an enchanted prince",
            "why",
        ),
        (
            "Why did the wife send him back?",
            ["She sent him back to ask for a castle."],
            {},
            "to ask for a castle",
            "why",
        ),
        ("How did the fisherman feel when his wife sent him back?", [HEAVY], {}, "heavy", "feeling"),
        (
            "How did Tom open the tin?",
            ["Tom opened the tin by prising the lid with a knife."],
            {},
            "by prising the lid with a knife",
            "how",
        ),
        (
            "What did the fisherman do after he caught the flounder?",
            ["The fisherman put the flounder back into the clear water."],
            {},
            "put the flounder back into the clear water",
            "action",
        ),
        (
            "What did the wife want first?",
            ["The wife wanted a little cottage instead of the hovel."],
            {},
            "a little cottage instead of the hovel",
            "what",
        ),
    ],
)
def test_typed_span_with_its_quote(question, texts, fields, expected, kind):
    result = answer(question, *texts, **fields)
    assert result.typed and result.kind == kind and result.text == expected
    assert result.quote == texts[0] and result.section_id == "sec-0" and kind in result.note()


def test_falls_back_to_the_sentence_and_says_so():
    result = answer("Why did the sea change colour?", "The sea was purple and dark blue and grey and thick.")
    assert not result.typed and result.kind == "sentence"
    assert result.text == "The sea was purple and dark blue and grey and thick."
    assert "no typed span" in result.note()


def test_graph_who_wins_and_keeps_a_supporting_quote():
    question = "Who hides the brass key in the van?"
    candidates = [
        Candidate("A brass key for some cabinet.", "s1", 0.9, speaker="DANIEL"),
        Candidate(KEY, "s2", 0.5, actor="Tom Hale"),
    ]
    result = short_answer(question, read_question(question), candidates, find, who=("Tom Hale", None))
    assert result.text == "Tom Hale" and result.quote == KEY and "graph" in result.method


def test_no_candidates_and_chinese():
    assert short_answer("Who?", read_question("Who?"), []) is None
    result = short_answer(
        "谁把钥匙藏起来了？",
        read_question("谁把钥匙藏起来了？"),
        [Candidate("汤姆把钥匙藏在车里。", "s", 1.0)],
    )
    assert not result.typed and result.text == "汤姆把钥匙藏在车里。"


def test_a_scene_heading_is_never_the_sentence_answer():
    question = "How does Margaret's relationship with Daniel evolve from their first meeting to the dawn?"
    heading = Candidate("16 EXT. CLIFF PATH - DAWN 16", "s16", 0.9, heading=True)
    line = Candidate("Margaret looks at him for a long time, then nods once.", "s16", 0.8)
    answer = short_answer(question, read_question(question), [heading, line])
    assert answer is not None and answer.kind == "sentence"
    assert answer.text == line.text and answer.quote == line.text
    only_heading = short_answer(question, read_question(question), [heading])
    assert only_heading is not None and only_heading.text == heading.text  # nothing else to say
