"""Clause-level short answers on sentences of the bundled samples: the clause after the question's
event (action and outcome), the cause beside the clause stating the question's predicate, a feeling
named in another form or shown by a reaction, the noun phrase before a who-question's verb, what
follows a what-question's verb, the place phrase after a where-question's verb, and the sentence
stating the predicate as the labelled fallback."""

from __future__ import annotations

import pytest

from tasks.query.question_form import read_question
from tasks.query.short_answers.choose import Candidate, short_answer
from tasks.query.short_answers.clauses import clauses, predicate_keys, read_event_question, split_question

PALACE = (
    "When the fisherman came home, the palace had grown much larger, with a tall tower and soldiers "
    "and drummers and trumpeters at the gate."
)
HOME = "Then the fisherman got up and went home to his wife in the hovel."
UNHAPPY = (
    'So the fisherman went, and he was very unhappy, for he thought, "It is not right, it is not right '
    'at all."'
)
QUARREL = (
    "The fisherman did not really want to go, but he did not want to quarrel with his wife either, so "
    "he went down to the sea."
)
SPOKE = "To the fisherman's astonishment, the flounder spoke to him."
BENCH = "In its place stood a neat little cottage, and his wife was sitting on a bench by the door."


def find(text: str) -> list[tuple[int, int, str, str]]:
    found = []
    for surface, name in {"Margaret": "Margaret Hale", "Tom": "Tom Hale"}.items():
        start = text.find(surface)
        if start >= 0:
            found.append((start, start + len(surface), name, "character"))
    return found


def answer(question: str, *texts: str):
    candidates = [Candidate(t, f"sec-{i}", 1.0 - 0.01 * i) for i, t in enumerate(texts)]
    return short_answer(question, read_question(question), candidates, find)


@pytest.mark.parametrize(
    "question, texts, expected, kind, method",
    [
        (
            "What happened when the fisherman came home?",
            [PALACE],
            "the palace had grown much larger",
            "outcome",
            "follows the question's event",
        ),
        (
            "What did the fisherman do when the flounder begged to be let go?",
            ["When the flounder begged to be let go, the fisherman put him back into the clear water."],
            "put him back into the clear water.",
            "action",
            "follows the question's event",
        ),
        (
            "Why was the fisherman very unhappy?",
            [HOME, UNHAPPY],
            "he thought, It is not right, it is not right at all.",
            "why",
            "causal connective",
        ),
        (
            "Why did the fisherman go down to the sea?",
            [QUARREL],
            "he did not want to quarrel with his wife either",
            "why",
            'before "so"',
        ),
        (
            "How did the fisherman feel when the flounder spoke to him?",
            [SPOKE],
            "astonished",
            "feeling",
            "word of feeling",
        ),
        (
            "How did Margaret feel when Tom left?",
            ["Margaret watched the van go and wept."],
            "sad",
            "feeling",
            "not named in the text",
        ),
        (
            "Who came swimming up?",
            ['The flounder came swimming up and said, "Well, what does she want?"'],
            "The flounder",
            "who",
            "noun phrase before the question's verb",
        ),
        (
            "Who radios the harbour office?",
            ["Margaret radios the harbour office from the gallery."],
            "Margaret Hale",
            "who",
            "canonical name",
        ),
        (
            "What did the fisherman hear?",
            [HOME, "He heard the flounder calling from the water."],
            "the flounder calling from the water.",
            "what",
            "follows the question's verb",
        ),
        (
            "Where was the wife sitting?",
            [BENCH],
            "on a bench by the door",
            "where",
            "place phrase after the question's verb",
        ),
    ],
)
def test_clause_answers(question, texts, expected, kind, method):
    result = answer(question, *texts)
    assert result.typed and result.kind == kind and result.text == expected, result
    assert method in result.method and result.quote in texts


def test_cause_comes_from_the_sentence_stating_the_predicate_not_the_best_ranked():
    result = answer("Why was the fisherman very unhappy?", HOME, UNHAPPY)
    assert result.quote == UNHAPPY and result.section_id == "sec-1"


def test_fallback_is_the_sentence_stating_the_predicate_and_says_so():
    result = answer("Why did the sea turn dark grey?", HOME, "When he came to the sea, it was dark grey.")
    assert not result.typed and result.kind == "sentence"
    assert result.text == "When he came to the sea, it was dark grey."
    assert "stating the question's predicate" in result.note() and "no typed span" in result.note()


def test_question_reading():
    assert split_question("What did the little old woman give to Tephany?") == (
        "the little old woman",
        "give",
        "to Tephany",
    )
    assert predicate_keys("Why did the Giant build a high wall?") == {"build", "high", "wall"}
    event = read_event_question("What did the dog do when he grew angry at the cat?")
    assert event.acts and event.subject == "the dog" and event.cue == "when"
    assert read_event_question("What happened after Tephany burst into tears?").cue == "after"
    assert clauses("The cat, however, quickly climbed over the roof; the dog swam.") == [
        "The cat, however, quickly climbed over the roof",
        "the dog swam.",
    ]
