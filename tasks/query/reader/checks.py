"""When the model's reading overrides the offline reader's (the LLM reader, NKW's and the baselines').

The offline reader's answer is offered to the model (as candidate 1, or as the pick shown beside the
options), so the model's reply is a second opinion. A small model's disagreement is often noise: the
0.5B model named option B in every QuALITY answer whatever the passages said, and its own free answers
restated the question ("The Mudjee Monedo always ran in a circle") or shortened an offered candidate
("Nils" for "Charcoal Nils"). Two checks decide when it overrides, neither tuned to a data set:

- an option that differs from the offline pick stands only when the model names the same option
  again with the options rotated by one place (a position preference cannot survive the rotation:
  every option moves to another letter);
- an own free answer stands only when it adds a content word to the question's and one of its added
  words occurs in the passages; an own answer whose added words all lie within an offered candidate
  is that candidate (the passage's words, unshortened).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from tasks.text import CJK_CHAR, content_words


def rotated(options: list[str]) -> list[str]:
    """The options moved one place: the first goes last, every option gets another letter."""
    return options[1:] + options[:1]


def from_rotated(position: int, count: int) -> int:
    """The original index of the option at `position` of `rotated(options)`."""
    return (position + 1) % count


def to_rotated(index: int, count: int) -> int:
    """The position in `rotated(options)` of the option at original `index`."""
    return (index - 1) % count


@dataclass(frozen=True)
class OptionVerdict:
    chosen: int  # the option kept
    confirmed: bool  # the model's pick stood (or agreed with the offline pick)
    note: str


def confirm_option(
    model_choice: int, offline_choice: int | None, count: int, ask_rotated: Callable[[int | None], int | None]
) -> OptionVerdict:
    """The option to keep. `ask_rotated(offline pick's rotated position)` asks the model again with
    the options rotated and returns its pick's rotated position (None: no usable reply)."""
    if offline_choice is None or model_choice == offline_choice or count < 2:
        return OptionVerdict(model_choice, True, "")
    again = ask_rotated(to_rotated(offline_choice, count))
    if again is not None and from_rotated(again, count) == model_choice:
        return OptionVerdict(
            model_choice,
            True,
            f"the model named option {chr(65 + model_choice)} again with the options rotated",
        )
    repeated = "no usable reply" if again is None else f"option {chr(65 + from_rotated(again, count))}"
    return OptionVerdict(
        offline_choice,
        False,
        f"the model's option {chr(65 + model_choice)} did not stand with the options rotated ({repeated}):"
        f" the offline pick {chr(65 + offline_choice)} kept",
    )


def _words(text: str) -> set[str]:
    """Index terms without Chinese character pairs: a pair across an answer's seam (了书 in 李明去了书房)
    is no word of the answer."""
    return {term for term in content_words(text) if len(term) == 1 or not CJK_CHAR.match(term)}


@dataclass(frozen=True)
class AnswerVerdict:
    action: (
        str  # "keep": the model's own answer; "candidate": candidate `number`; "refuse": the offline answer
    )
    number: int = 0
    note: str = ""


def screen_own_answer(answer: str, question: str, candidates: list[str], passages: str) -> AnswerVerdict:
    """Whether the model's own free answer stands. Words are stemmed non-stopwords, or Chinese
    characters. With no candidate offered there is nothing to prefer: it stands."""
    if not candidates or not answer.strip():
        return AnswerVerdict("keep")
    added = _words(answer) - _words(question)
    if not added:
        return AnswerVerdict("refuse", note="the model's own answer adds no word to the question")
    for number, candidate in enumerate(candidates, start=1):
        if added <= _words(candidate):
            return AnswerVerdict(
                "candidate", number, f"the model's own answer lies within candidate {number}"
            )
    if not added & _words(passages):
        return AnswerVerdict("refuse", note="no word the model's own answer adds is in the passages")
    return AnswerVerdict("keep")
