"""Gold scenes map to sections by heading, then scene number, then text overlap; what cannot be
mapped is counted, listed and kept out of evidence recall, never dropped silently."""

import pandas as pd

from flows.evaluation.evaluate import answer_row, format_report, EvalReport
from tasks.evaluate.gold_mapping import (
    SectionLookup,
    gold_lines,
    gold_summary,
    gold_warning,
    map_gold,
    title_number,
)
from tasks.evaluate.metrics import Question, summarize
from tasks.query.answer_types import Answer, EvidenceText

SECTIONS = pd.DataFrame(
    [
        {
            "section_id": "p",
            "heading": "Preamble",
            "ordinal": 0,
            "section_kind": "preamble",
            "scene_number": None,
            "text": "标题",
        },
        {
            "section_id": "a",
            "heading": "1、INT. ROOM - DAY",
            "ordinal": 1,
            "section_kind": "scene",
            "scene_number": "1",
            "text": "1、INT. ROOM - DAY\nA man sits.",
        },
        {
            "section_id": "b",
            "heading": "第2场 上海街头，夜，外",
            "ordinal": 2,
            "section_kind": "scene",
            "scene_number": "2",
            "text": "第2场 上海街头，夜，外\n人来人往。",
        },
        {
            "section_id": "c",
            "heading": "Part 3: 火车站台",
            "ordinal": 3,
            "section_kind": "paragraphs",
            "scene_number": None,
            "text": "7.客栈大堂（夜）\n油灯昏黄。\n\n8.客栈后院（日）\n马在吃草。",
        },
        {
            "section_id": "d",
            "heading": "十二、剧院后台冬夜内",
            "ordinal": 4,
            "section_kind": "scene",
            "scene_number": "12",
            "text": "十二、剧院后台冬夜内\n演员们挤在化妆间。",
        },
    ]
)


def _map(related: str):
    return map_gold({"related_scenes": related}, SectionLookup(SECTIONS))


def test_each_way_of_mapping():
    assert _map("1、INT.  ROOM - DAY").methods == {"1、INT.  ROOM - DAY": "heading"}
    by_number = _map("2、上海街头 夜 外")
    assert by_number.section_ids == ["b"] and by_number.methods["2、上海街头 夜 外"] == "number"
    assert _map("第十二场 剧院后台").section_ids == ["d"]
    inside = _map("8.客栈后院（日）")
    assert inside.section_ids == ["c"] and inside.methods["8.客栈后院（日）"] == "overlap"
    similar = _map("剧院后台冬夜内")
    assert similar.section_ids == ["d"] and similar.methods["剧院后台冬夜内"] == "overlap"
    assert title_number("12、INT. X") == "12" and title_number("第十二场") == "12"
    assert title_number("INT. X") is None


def test_partly_unmapped_gold_is_reported_and_keeps_the_question_out_of_recall():
    mapping = _map("1、INT. ROOM - DAY; 99、EXT. NOWHERE - NIGHT")
    assert mapping.section_ids == ["a"] and mapping.unmapped == ["99、EXT. NOWHERE - NIGHT"]
    assert not mapping.is_mapped
    fairy = map_gold({"cor_section": "2, 9"}, SectionLookup(SECTIONS))
    assert fairy.section_ids == ["b"] and fairy.unmapped == ["9"]
    assert not map_gold({}, SectionLookup(SECTIONS)).has_gold
    assert not _map("whole film").has_gold and not _map("全片").has_gold  # no scene is named


def _answer(sections: list[str]) -> Answer:
    evidence = [EvidenceText(f"c-{s}", s, s, 1, "text", 3, 1.0) for s in sections]
    return Answer(doc_id="d", question="?", system="nkw", answer="x", is_offline=True, evidence=evidence)


def test_summary_counts_unmapped_per_language_and_warns_above_five_percent():
    rows = []
    for i in range(10):
        language = "zh" if i < 5 else "en"
        question = Question(f"q{i}", "d", "?", "x", None, None, None, {})
        unmapped = ["9、nowhere"] if i == 0 else []
        gold = [] if i == 0 else ["a"]
        evidence = _answer(["a"] if i % 2 else ["b"])
        rows.append(answer_row("r", "stage", question, 0, evidence, gold, "answered", language, unmapped))
    no_gold = Question("q-none", "d", "?", "x", None, None, None, {})
    rows.append(answer_row("r", "stage", no_gold, 0, _answer([]), [], "answered", "en", []))
    frame = pd.DataFrame(rows)
    assert rows[0]["evidence_recall"] is None and rows[0]["gold_unmapped"] == ["9、nowhere"]
    summary = gold_summary(frame)
    assert summary["with_gold"] == 10 and summary["unmapped"] == 1 and summary["unmapped_share"] == 0.1
    zh, en = summary["by_language"]["zh"], summary["by_language"]["en"]
    assert (zh["with_gold"], zh["unmapped"], zh["n_recall"], zh["evidence_recall"]) == (5, 1, 4, 0.5)
    assert (en["questions"], en["with_gold"], en["unmapped"], en["evidence_recall"]) == (6, 5, 0, 0.6)
    assert summarize(frame)["evidence_recall"] == round(5 / 9, 4)  # over the mapped questions only
    warning = gold_warning("stage", summary)
    assert warning and "1 of 10" in warning and "10.0%" in warning
    assert gold_warning("stage", {**summary, "unmapped_share": 0.05}) is None
    lines = gold_lines(summary, verbose=True)
    assert lines[0].startswith("gold mapping: 1 of 10")
    assert any(line.startswith("evidence recall [zh]") and "unmapped gold: 1 of 5" in line for line in lines)
    assert any("unmapped q0 (zh): 9、nowhere" in line for line in lines)
    assert not any("unmapped q0" in line for line in gold_lines(summary))
    report = EvalReport("r", "stage", "nkw", frame, summarize(frame), {}, gold=summary, warnings=[warning])
    text = format_report(report, verbose=True)
    assert "warning: stage: 1 of 10" in text and "unmapped q0" in text
    assert report.to_json()["gold_mapping"]["by_language"]["zh"]["unmapped"] == 1
