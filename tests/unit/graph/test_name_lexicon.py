"""The lexicon's surface trie matches what the alternation of its surfaces (longest first) matches."""

from __future__ import annotations

import random
import re

from tasks.graph.name_lexicon import ANY, CAPS, PROPER, Lexicon, surface_trie
from tests.conftest import SCREENPLAY

EN_AROUND = r"(?<![\w'’\-])(?:{})(?![\w\-]|['’][a-rt-z])"


def _alternation(surfaces: list[str]) -> str:
    """The reference: every surface in one alternation, longest first (ties alphabetical)."""
    ordered = sorted(surfaces, key=lambda s: (-len(s), s))
    return "|".join(r"\s+".join(re.escape(p) for p in s.split(" ")) for s in ordered)


def _spans(pattern: str, text: str, flags: int = 0) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(pattern, text, flags)]


def test_the_trie_matches_the_alternation_on_random_lexicons():
    text = SCREENPLAY.read_text(encoding="utf-8")
    words = sorted({w.casefold() for w in re.findall(r"[A-Za-z][a-z'’\-]+", text)})
    rng = random.Random(7)
    for _ in range(300):
        base = rng.sample(words, 25)
        surfaces = set(base)
        for word in base[:8]:
            surfaces.add(word[: max(2, len(word) // 2)])  # a surface that is another's prefix
            surfaces.add(f"{word} {rng.choice(words)}")  # one that extends another over a space
        surfaces = sorted(s for s in surfaces if len(s) >= 2)
        start = rng.randrange(0, max(1, len(text) - 2500))
        passage = text[start : start + 2500]
        expected = _spans(EN_AROUND.format(_alternation(surfaces)), passage, re.IGNORECASE)
        assert _spans(EN_AROUND.format(surface_trie(surfaces)), passage, re.IGNORECASE) == expected


def test_the_trie_matches_the_alternation_on_chinese_names():
    text = "程勇爸爸来了。程勇说：吕受益和思慧在等刘思慧。曹斌、曹警官、吕受益。"
    surfaces = ["程勇", "程勇爸爸", "吕受益", "思慧", "刘思慧", "曹斌", "曹警官", "曹"]
    expected = _spans(f"(?:{_alternation(surfaces)})", text)
    assert _spans(f"(?:{surface_trie(surfaces)})", text) == expected
    assert ("程勇爸爸" in [text[a:b] for a, b in expected]) and len(expected) == 8


def _lexicon(language: str, surfaces: list[str]) -> Lexicon:
    lexicon = Lexicon(language)
    for number, surface in enumerate(surfaces):
        lexicon.add(surface, f"e{number % 5}", ANY)
    return lexicon


def test_a_match_of_letters_that_case_folding_keeps_apart_finds_its_surface():
    # Case-blind matching pairs "I" with the dotless "ı" of a Turkish name, yet "I" folds to "i":
    # such a match is traced back to its surface instead of failing the lookup.
    lexicon = _lexicon("en", ["Işık", "ıvan", "Ivo"])
    found = [(a, b, key) for a, b, key in lexicon.find_spans("IŞIK met IVAN, Ivo and ıvan.")]
    assert found == [(0, 4, "e0"), (9, 13, "e1"), (15, 18, "e2"), (23, 27, "e1")]


def test_find_spans_keeps_the_longest_name_and_the_case_policies():
    lexicon = Lexicon("en")
    lexicon.add("John Smith", "js", PROPER)
    lexicon.add("John", "j", PROPER)
    lexicon.add("WAITRESS", "w", CAPS)
    lexicon.add("brass key", "k", ANY)
    text = "John  Smith and JOHN met the WAITRESS; a waitress, john, and the Brass Key."
    found = [(text[a:b], key) for a, b, key in lexicon.find_spans(text)]
    assert found == [("John  Smith", "js"), ("JOHN", "j"), ("WAITRESS", "w"), ("Brass Key", "k")]
