import pandas as pd
import pytest

import random

from tasks.evaluate.metrics import (
    Question,
    best_rouges,
    evidence_recall,
    gold_section_ids,
    lcs_length,
    rouge_l_f1,
    rouge_n_f1,
    summarize,
)
from tasks.query.question_form import read_question


def test_rouge_l():
    assert rouge_l_f1("the cat sat", "the cat sat") == 1.0
    assert rouge_l_f1("", "x") == 0.0
    assert rouge_l_f1("a b c d", "a c") == pytest.approx(2 * (2 / 4) * 1.0 / (2 / 4 + 1.0))
    assert rouge_l_f1("程勇走了", "程勇来了") == pytest.approx(0.75)


def _lcs_table(a: list[str], b: list[str]) -> int:
    previous = [0] * (len(b) + 1)
    for token in a:
        current = [0]
        for j, other in enumerate(b, start=1):
            current.append(previous[j - 1] + 1 if token == other else max(previous[j], current[j - 1]))
        previous = current
    return previous[-1]


def test_bit_parallel_lcs_matches_the_quadratic_table():
    draw = random.Random(7)
    for _ in range(500):
        a = [draw.choice("abcde") for _ in range(draw.randint(0, 40))]
        b = [draw.choice("abcdef") for _ in range(draw.randint(0, 40))]
        assert lcs_length(a, b) == _lcs_table(a, b)


def test_rouge_n_counts_clipped_ngrams():
    # candidate bigrams: the cat, cat sat, sat the, the cat; reference: the cat, cat ran
    assert rouge_n_f1("the cat sat the cat", "the cat ran", 2) == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert rouge_n_f1("a b", "a b", 1) == 1.0
    assert rouge_n_f1("a", "a", 2) == 0.0  # no bigram on either side


def test_best_rouges_take_each_metric_from_its_best_reference():
    scores = best_rouges("the old man sails home", ["the man sails", "old home the"])
    assert scores["rouge_1_f1"] == pytest.approx(rouge_n_f1("the old man sails home", "the man sails", 1))
    assert scores["rouge_2_f1"] == pytest.approx(rouge_n_f1("the old man sails home", "the man sails", 2))
    assert best_rouges("x", []) == {"rouge_1_f1": None, "rouge_2_f1": None, "rouge_l_f1": None}


def test_squality_references_are_read_for_scoring():
    question = Question("q", "d", "?", "first", None, None, "plot", {"references": ["first", "second"]})
    assert question.references == ["first", "second"]
    assert Question("q", "d", "?", "only", None, None, None, {}).references == ["only"]


def test_gold_sections_from_scene_titles_and_section_numbers():
    sections = pd.DataFrame(
        [
            {"section_id": "a", "heading": "1、INT. ROOM - DAY", "ordinal": 1, "section_kind": "scene"},
            {"section_id": "b", "heading": "2.\u00a0\u00a0街道日外", "ordinal": 2, "section_kind": "scene"},
        ]
    )
    stage_q = Question(
        "q", "d", "?", "x", None, None, None, {"related_scenes": "1、INT. ROOM - DAY; 2.  街道日外"}
    )
    assert gold_section_ids(stage_q, sections) == ["a", "b"]
    fairy_q = Question("q", "d", "?", "x", None, None, None, {"cor_section": "2"})
    assert gold_section_ids(fairy_q, sections) == ["b"]
    assert gold_section_ids(Question("q", "d", "?", "x", None, None, None, {}), sections) == []
    assert evidence_recall(["a", "b"], ["b", "c"]) == 0.5
    assert evidence_recall([], ["b"]) is None


def test_summary_ignores_missing_values():
    rows = pd.DataFrame(
        [
            {
                "status": "answered",
                "evidence_recall": 1.0,
                "is_correct_option": None,
                "rouge_l_f1": 0.5,
                "latency_ms": 10.0,
            },
            {
                "status": "answered",
                "evidence_recall": 0.0,
                "is_correct_option": True,
                "rouge_l_f1": 0.3,
                "latency_ms": 30.0,
            },
            {
                "status": "document_missing",
                "evidence_recall": None,
                "is_correct_option": None,
                "rouge_l_f1": None,
                "latency_ms": None,
            },
        ]
    )
    metrics = summarize(rows)
    assert metrics["evidence_recall"] == 0.5 and metrics["mcq_accuracy"] == 1.0
    assert metrics["latency_ms_p50"] == 20.0


def test_question_form():
    form = read_question("Why does Tom hide the key before the storm?")
    assert form.wh == "why" and "before" in form.temporal and form.is_causal
    assert read_question("Who locks the door?").wh == "who"
    assert read_question("Did Nadia leave?").wh == "yesno"
    assert read_question("程勇为什么去印度？").wh == "why"
