"""Heading forms found across the STAGE release's screenplays (written for these tests, a few lines
each): numbering runs whose headings carry a whole line of action, scene words before or after the
number, bracketed and digit-by-digit Chinese numerals, numbers run into the place, shooting scripts
with the number in both margins, and periods that open wrapped dialogue lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.ingest.scene_headings import read_shape, zh_number
from tasks.ingest.segment_sections import detect_kind, segment

SCREENPLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "screenplays"


def _first_lines(name: str, language: str) -> list[str]:
    text = (SCREENPLAYS / name).read_text(encoding="utf-8")
    assert detect_kind(text, language) == "screenplay"
    rows, _ = segment("d", text, language, "screenplay")
    for row in rows:
        assert text[row["char_start"] : row["char_end"]] == row["text"]
    return [r["text"].split("\n")[0].strip() for r in rows if r["section_kind"] == "scene"]


@pytest.mark.parametrize(
    "name, language, expected",
    [
        (
            "zh_numbering_runs.txt",
            "zh",
            [
                "1、小镇街口，日，外",
                "2、 一辆卡车驶进了小镇。",  # a line of action under the scene's number
                "3、茶馆，日，内",
                "3、画面组合",  # the number again at a block opening
                "4. 12     仓库，夜，内",  # a number inside the place
                "5. 渡口，夜，外",
                "6. 定格。",  # the last scene, after the last heading with fields
            ],
        ),
        (
            "zh_scene_words.txt",
            "zh",
            ["序场A，江边", "1场，码头外，日", "2场日/内景", "场3，夜，仓库内", "4场"],
        ),
        (
            "zh_bracket_numerals.txt",
            "zh",
            [
                "（一）七月的午后。镇外的土路。",
                "（二）榨油坊门前。",
                "（三）小赌场。白天。",
                "（四）河堤上。黄昏。",
            ],
        ),
        (
            "zh_run_in_numbers.txt",
            "zh",
            [
                "1码头  夜  外",
                "2仓库  夜  内（回忆）",
                "3码头  日  外  （字幕：三年后）",
                "1外景  街口  日",  # the second part numbers its scenes from 1 again
                "2内景  茶馆  日",
            ],
        ),
        (
            "en_shooting_script.txt",
            "en",
            ["1 A RIVER AT DAWN 1", "2 INT. BOATHOUSE - DAY 2", "4 THE FERRY DOCK 4", "5 5"],
        ),
        ("en_leading_periods.txt", "en", ["INT. DUGOUT - DAY", ".SNOWY FIELD"]),
    ],
)
def test_release_heading_forms_open_their_scenes(name, language, expected):
    assert _first_lines(name, language) == expected


def test_fields_of_the_new_forms():
    assert read_shape("场3，夜，仓库内", "zh").number == "3"
    two = read_shape("2仓库  夜  内（回忆）", "zh")
    assert (two.number, two.location, two.interior, two.time_of_day) == ("2", "仓库", "INT", "NIGHT")
    bookended = read_shape("2 INT. BOATHOUSE - DAY 2", "en")
    assert (bookended.number, bookended.location, bookended.interior) == ("2", "BOATHOUSE", "INT")
    assert zh_number("一零四") == 104 and zh_number("一百零四") == 104


@pytest.mark.parametrize("line", ["117办公室日内", "一场大雨", "三 个警察站在门外，喊着什么。"])
def test_chinese_lines_that_stay_text(line):
    assert read_shape(line, "zh") is None


@pytest.mark.parametrize("line", ["4 CONTINUED: 4", "6A CONTINUED: 6A", "12 (CONTINUED) 12"])
def test_the_top_of_a_continued_page_is_not_a_heading_of_its_own(line):
    shape = read_shape(line, "en")
    assert shape is None or shape.strength != "explicit"


def _numbered_script(extra: dict[int, str]) -> str:
    scenes = []
    for n in range(1, 13):
        scenes.append(f"{n}、地点{n}，日，内\n人物{n}走进来。" + extra.get(n, ""))
    return "\n\n".join(scenes) + "\n"


def test_an_unnumbered_place_line_inside_a_numbered_script_stays_in_its_scene():
    text = _numbered_script({5: "\n小巷，夜，外\n他转身跑进小巷。"})
    rows, _ = segment("d", text, "zh", "screenplay")
    assert [r["scene_number"] for r in rows] == [str(n) for n in range(1, 13)]
    assert "小巷，夜，外" in rows[4]["text"]


def test_a_number_written_twice_in_another_style_is_not_a_second_scene():
    # The draft's "6. 日 外 …" inside scene 5, then the script's own "6、日.外.…" opening scene 6
    text = _numbered_script({5: "\n\n            6. 日 外 县衙门口\n众人围观。"})
    text = text.replace("6、地点6，日，内", "6、日.外.县衙门口")
    rows, _ = segment("d", text, "zh", "screenplay")
    assert [r["scene_number"] for r in rows] == [str(n) for n in range(1, 13)]
    assert rows[5]["heading"] == "6、日.外.县衙门口" and "6. 日 外 县衙门口" in rows[4]["text"]


def test_a_sub_scene_inside_its_scene_stays_there_whatever_its_place_carries():
    # "5B、门外" has a run-in 外, like "5A、楼上卧室" it continues scene 5; at a block opening it is a scene
    text = _numbered_script(
        {5: "\n5A、楼上卧室\n她望着窗外。\n5B、门外\n孩子们放着鞭炮。", 8: "\n\n8A、门外\n雪停了。"}
    )
    rows, _ = segment("d", text, "zh", "screenplay")
    assert [r["scene_number"] for r in rows] == [str(n) for n in range(1, 9)] + ["8A"] + [
        str(n) for n in range(9, 13)
    ]
    assert "5B、门外" in rows[4]["text"]


def test_a_place_line_after_a_revision_note_heads_the_revised_scene():
    text = _numbered_script(
        {5: "\n（原稿）\n他在屋里剪纸。\n（改为）\n\n老屋院门外，下午\n他一边打电话一边走来走去。"}
    )
    rows, _ = segment("d", text, "zh", "screenplay")
    assert [r["heading"] for r in rows][4:7] == ["5、地点5，日，内", "老屋院门外，下午", "6、地点6，日，内"]
    # without the note it is a change of place within scene 5
    rows, _ = segment("d", text.replace("（改为）\n", ""), "zh", "screenplay")
    assert len(rows) == 12
