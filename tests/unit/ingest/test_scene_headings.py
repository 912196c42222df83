"""Scene headings as screenplays write them: each Chinese numbering style and their mix, and
irregular English sluglines. The screenplays in tests/fixtures/screenplays were written for
these tests."""

from pathlib import Path

import pytest

from tasks.ingest.scene_headings import read_shape, zh_number
from tasks.ingest.segment_sections import FALLBACK, detect_kind, segment

SCREENPLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "screenplays"
FIELDS = ("scene_number", "interior", "location", "time_of_day")


def _scenes(name: str, language: str) -> tuple[list[dict], list[str]]:
    text = (SCREENPLAYS / name).read_text(encoding="utf-8")
    assert detect_kind(text, language) == "screenplay"
    rows, warnings = segment("d", text, language, "screenplay")
    for row in rows:
        assert text[row["char_start"] : row["char_end"]] == row["text"]
    return [r for r in rows if r["section_kind"] == "scene"], warnings


@pytest.mark.parametrize(
    "name, expected",
    [
        (
            "zh_spaced.txt",
            [("1", "INT", "学校走廊", "NIGHT"), ("2", "EXT", "操场", "DAY"), ("3", "EXT", "校门口", "NIGHT")],
        ),
        (
            "zh_scene_no.txt",
            [
                ("1", None, None, None),
                ("2", "INT", "阿梅家厨房", "DAY"),
                ("3", "EXT", "河边小路", "DAY"),
                ("12", None, None, None),
            ],
        ),
        (
            "zh_comma.txt",
            [
                ("5", "EXT", "上海街头", "NIGHT"),
                ("6", "INT", "出租车", "NIGHT"),
                ("7", "EXT", "外滩观景台", "NIGHT"),
            ],
        ),
        (
            "zh_numerals.txt",
            [
                ("1", "EXT", "剧院", "AUTUMN MORNING"),
                ("2", "INT", "剧院后台", "WINTER NIGHT"),
                ("3", "INT", "剧院大厅", "DAY"),
                ("10", "EXT", "剧院门口", "DUSK"),
            ],
        ),
        (
            "zh_no_number.txt",
            [
                (None, "EXT", "火车站台", "NIGHT"),
                (None, "INT", "车厢", "NIGHT"),
                (None, "EXT", "小镇街道", "DAY"),
            ],
        ),
        (
            "zh_brackets.txt",
            [("7", None, "客栈大堂", "NIGHT"), ("8", None, "客栈后院", "DAY"), ("9", "EXT", "山道", "NIGHT")],
        ),
        (
            "zh_mixed.txt",
            [
                ("1", "INT", "医院大厅", "DAY"),
                ("2", "INT", "病房", "DAY"),
                ("3", None, "医院天台", "NIGHT"),
                (None, "EXT", "停车场", "NIGHT"),
                ("5", "INT", "病房", "MORNING"),
                ("6", "INT", "HOSPITAL CORRIDOR", "DAY"),
            ],
        ),
        ("zh_not_headings.txt", [("1", "INT", "仓库", "NIGHT"), ("2", "EXT", "仓库门口", "NIGHT")]),
    ],
)
def test_chinese_screenplays_segment_exactly(name, expected):
    scenes, warnings = _scenes(name, "zh")
    assert [tuple(s[f] for f in FIELDS) for s in scenes] == expected
    assert not any(FALLBACK in w for w in warnings)


def test_two_line_scene_heading_keeps_both_lines_and_its_text():
    scenes, _ = _scenes("zh_scene_no.txt", "zh")
    assert scenes[2]["heading"] == "第3场 日 外 河边小路"
    assert scenes[2]["text"].splitlines()[2] == "阿梅牵着女儿慢慢走。"


def test_heading_like_lines_that_break_the_numbering_are_reported():
    scenes, warnings = _scenes("zh_not_headings.txt", "zh")
    assert "3 个警察站在门外" in scenes[0]["text"] and "117办公室日内" in scenes[0]["text"]
    assert len(warnings) == 1 and "3 个警察站在门外" in warnings[0]


def test_english_irregular_sluglines():
    scenes, warnings = _scenes("en_irregular.txt", "en")
    assert [tuple(s[f] for f in FIELDS) for s in scenes] == [
        ("1", "EXT", "HARBOUR ROAD", "DAWN"),
        ("2", "INT", "MARA'S KITCHEN", "MORNING"),
        (None, "INT", "HALLWAY", "CONTINUOUS"),
        (None, "EXT", "FRONT STEPS", "CONTINUOUS"),
        ("12", "INT", "POLICE STATION", "NIGHT"),
        (None, "INT", "MARA'S CAR / INT. POLICE STATION", "NIGHT"),
        (None, "EXT", "BUS DEPOT", "DAY"),
        (None, "INT", "LAUNDROMAT", "DAY"),
        (None, "EXT", "PIER", "SUNSET"),
        (None, "EXT", "LIGHTHOUSE", "NIGHT"),
        (None, None, "THE CLIFF TOP", "NIGHT"),
    ]
    # A flashback slug inside a running block and "THE NEXT DAY" stay inside their scenes.
    assert "FLASHBACK - INT. LIGHTHOUSE - DAY" in scenes[9]["text"]
    assert "THE NEXT DAY" in scenes[10]["text"]
    assert not warnings


def test_english_numbered_heading_without_int_ext_is_kept_by_its_numbering():
    scenes, _ = _scenes("en_stage_style.txt", "en")
    assert [s["heading"] for s in scenes] == [
        "1、EXT. ORCHARD - DAY",
        "2、INT. FARMHOUSE - NIGHT",
        "3、BLACK SCREEN",
        "4、INT. BARN - CONTINUOUS 4",
    ]
    assert (scenes[2]["scene_number"], scenes[2]["location"]) == ("3", "BLACK SCREEN")
    assert (scenes[3]["scene_number"], scenes[3]["time_of_day"]) == ("4", "CONTINUOUS")


def test_prose_and_dialogue_lines_are_not_headings():
    for line in (
        "程勇：我上次给你那批油。",
        "程勇站在门外",
        "夜，外面下着雨。",
        "一辆车驶过。",
        "他走进来，",
        "I walked in at night - it was late.",
        "THE NEXT DAY",
        "INTERCUT WITH:",
        "CUT TO:",
    ):
        shape = read_shape(line, "zh" if not line.isascii() else "en")
        assert shape is None or shape.strength == "follow", line


def test_chinese_numerals():
    assert [zh_number(t) for t in ("三", "十", "十二", "二十", "一百零五", "两百", "7")] == [
        3,
        10,
        12,
        20,
        105,
        200,
        7,
    ]


def test_screenplay_with_no_recognisable_headings_says_it_fell_back():
    rows, warnings = segment("d", "林舟：你好。\n\n周老师：你好。\n", "zh", "screenplay")
    assert rows[0]["section_kind"] == "paragraphs"
    assert warnings == [f"{FALLBACK}: no scene headings recognised"]


def test_text_of_speech_without_headings_is_flagged_even_when_read_as_prose():
    text = "\n".join(f"{'林舟' if i % 2 else '周老师'}：第{i}句话。" for i in range(24))
    assert detect_kind(text, "zh") == "prose"
    rows, warnings = segment("d", text, "zh", "prose")
    assert rows[0]["section_kind"] == "paragraphs"
    assert len(warnings) == 1 and warnings[0].startswith(FALLBACK) and "24 lines of speech" in warnings[0]
    _, quiet = segment("d", "Once upon a time.\n\nThe end.", "en", "prose")
    assert quiet == []
