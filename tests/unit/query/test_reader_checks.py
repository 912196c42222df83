"""When the model's reading overrides the offline reader's: an option must survive a rotation of the
options, an own free answer must add a word from the passages to the question's."""

from __future__ import annotations

import pytest

from tasks.query.reader.checks import confirm_option, from_rotated, rotated, screen_own_answer, to_rotated

OPTIONS = ["red", "green", "blue", "white"]


def test_rotation_gives_every_option_another_letter_and_maps_back() -> None:
    moved = rotated(OPTIONS)
    assert moved == ["green", "blue", "white", "red"]
    for index, option in enumerate(OPTIONS):
        assert moved[to_rotated(index, 4)] == option and from_rotated(to_rotated(index, 4), 4) == index
        assert to_rotated(index, 4) != index


def test_an_agreeing_pick_asks_nothing_more() -> None:
    def never(_position: int | None) -> int | None:
        raise AssertionError("asked again")

    assert confirm_option(2, 2, 4, never).chosen == 2
    assert confirm_option(1, None, 4, never).confirmed  # no offline pick to keep


@pytest.mark.parametrize(
    "again, chosen, confirmed",
    [(0, 1, True), (1, 3, False), (None, 3, False)],  # rotated 0 is original 1; rotated 1 is original 2
)
def test_a_differing_pick_stands_only_when_named_again_rotated(
    again: int | None, chosen: int, confirmed: bool
) -> None:
    shown: list[int | None] = []

    def ask(position: int | None) -> int | None:
        shown.append(position)
        return again

    verdict = confirm_option(1, 3, 4, ask)
    assert (verdict.chosen, verdict.confirmed) == (chosen, confirmed)
    assert shown == [2]  # the offline pick (D) is shown under its rotated letter (C)


@pytest.mark.parametrize(
    "answer, action, number",
    [
        ("The Mudjee Monedo always ran in a circle", "refuse", 0),  # the question restated
        ("Nils", "candidate", 2),  # within an offered candidate: the candidate, unshortened
        ("Because of the silver moon", "refuse", 0),  # its added words are nowhere in the passages
        ("He was chasing his own tail", "keep", 0),
        ("", "keep", 0),
    ],
)
def test_an_own_answer_is_screened_against_question_candidates_and_passages(
    answer: str, action: str, number: int
) -> None:
    question = "Why did the Mudjee Monedo always run in a circle?"
    candidates = ["the forest spirit", "Charcoal Nils"]
    passages = "The Mudjee Monedo chased his tail all day. Charcoal Nils watched from the forest."
    verdict = screen_own_answer(answer, question, candidates, passages)
    assert (verdict.action, verdict.number) == (action, number)


def test_chinese_answers_are_screened_by_characters() -> None:
    verdict = screen_own_answer("李明去了书房", "李明去了哪里？", ["书房"], "李明走进书房。")
    assert verdict.action == "candidate" and verdict.number == 1
    assert screen_own_answer("李明去了", "李明去了哪里？", ["书房"], "李明走进书房。").action == "refuse"


def test_nothing_to_prefer_keeps_the_own_answer() -> None:
    assert screen_own_answer("anything at all", "Who?", [], "").action == "keep"
