"""`written_as_proper` finds a name's occurrences with str.find where that gives the regular
expression's matches: checked against the expression on random texts, special case folds included."""

import random
import re

from tasks.graph.screenplay import _occurrences, written_as_proper

ALPHABET = list("aAbBkKsSiI _'’-.\né1") + ["ſ", "K", "ı", "İ", "Σ", "ß"]


def _expected(text: str, name: str) -> list[int]:
    pattern = re.compile(rf"(?<![\w'’])({re.escape(name)})(?![\w])", re.IGNORECASE)
    return [match.start() for match in pattern.finditer(text)]


def test_occurrences_are_the_regular_expression_matches() -> None:
    rng = random.Random(3)
    for _ in range(5000):
        text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 40)))
        name = "".join(rng.choice("aAbBkKsSiI '-.") for _ in range(rng.randint(1, 3)))
        assert _occurrences(text, name) == _expected(text, name), (text, name)


def test_a_name_written_in_lower_case_mid_sentence_is_not_proper() -> None:
    text = "She met Rose at noon. The rose wilted, and the rose fell.\nROSE\nHi."
    assert _occurrences(text, "Rose") == [8, 26, 47, 58]
    assert not written_as_proper(text, "Rose")
    assert written_as_proper("Anna waves. Then Anna sits; she and Anna talk.", "Anna")
