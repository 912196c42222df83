import pandas as pd
import pytest

from tasks.evaluate.metrics import Question, evidence_recall, gold_section_ids, rouge_l_f1, summarize
from tasks.query.question_form import read_question


def test_rouge_l():
    assert rouge_l_f1("the cat sat", "the cat sat") == 1.0
    assert rouge_l_f1("", "x") == 0.0
    assert rouge_l_f1("a b c d", "a c") == pytest.approx(2 * (2 / 4) * 1.0 / (2 / 4 + 1.0))
    assert rouge_l_f1("程勇走了", "程勇来了") == pytest.approx(0.75)


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
