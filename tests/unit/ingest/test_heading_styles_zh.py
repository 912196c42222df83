"""Two Chinese heading styles: a place that starts with digits right after the scene number
("12 305病房 内 日" is scene 12 at 305病房) and a note run on after the markers ("书房,夜,内李明的回忆"
is 书房, night, interior, then a note). The screenplays in tests/fixtures/screenplays were written
for these tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.ingest.scene_headings import read_shape
from tasks.ingest.scene_markers_zh import split_run_on_note
from tasks.ingest.segment_sections import detect_kind, segment

SCREENPLAYS = Path(__file__).resolve().parents[2] / "fixtures" / "screenplays"
FIELDS = ("scene_number", "location", "interior", "time_of_day")


def _scenes(name: str) -> tuple[list[tuple], list[str]]:
    text = (SCREENPLAYS / name).read_text(encoding="utf-8")
    assert detect_kind(text, "zh") == "screenplay"
    rows, warnings = segment("d", text, "zh", "screenplay")
    assert all(text[r["char_start"] : r["char_end"]] == r["text"] for r in rows)
    assert all(r["section_kind"] == "scene" for r in rows)
    return [(r["heading"], *(r[f] for f in FIELDS)) for r in rows], warnings


def _fields(line: str) -> tuple:
    shape = read_shape(line, "zh")
    assert shape is not None, line
    return shape.number, shape.location, shape.interior, shape.time_of_day


@pytest.mark.parametrize(
    "line, expected",
    [
        ("12 305病房 内 日", ("12", "305病房", "INT", "DAY")),
        ("12 305病房，内，日", ("12", "305病房", "INT", "DAY")),  # full-width commas
        ("12 305病房,日,内", ("12", "305病房", "INT", "DAY")),  # half-width, 日 before 内
        ("12  305病房  日  内", ("12", "305病房", "INT", "DAY")),
        ("12　305病房　夜　外", ("12", "305病房", "EXT", "NIGHT")),  # ideographic spaces
        ("3 7路公交车 外 日", ("3", "7路公交车", "EXT", "DAY")),
        ("104 1201会议室 内 夜", ("104", "1201会议室", "INT", "NIGHT")),
        ("12、305病房 内 日", ("12", "305病房", "INT", "DAY")),
    ],
)
def test_a_place_that_starts_with_digits_after_the_scene_number(line, expected):
    assert _fields(line) == expected


@pytest.mark.parametrize(
    "line, expected",
    [
        ("书房,夜,内李明的回忆", (None, "书房", "INT", "NIGHT")),
        ("书房，夜，内李明的回忆", (None, "书房", "INT", "NIGHT")),  # full-width commas
        ("书房, 夜, 内李明的回忆", (None, "书房", "INT", "NIGHT")),  # spaces after the commas
        ("书房，内，夜李明的回忆", (None, "书房", "INT", "NIGHT")),  # 内 before 夜
        ("书房 夜 内 李明的回忆", (None, "书房", "INT", "NIGHT")),  # the note set apart by a space
        ("书房，日，外景李明的回忆", (None, "书房", "EXT", "DAY")),
        ("3、书房，夜，内李明的回忆", ("3", "书房", "INT", "NIGHT")),
        ("12 305病房，夜，内李明的回忆", ("12", "305病房", "INT", "NIGHT")),  # both styles at once
    ],
)
def test_a_note_run_on_after_the_markers(line, expected):
    assert _fields(line) == expected


def test_a_run_on_note_that_is_a_sentence_leaves_the_heading_to_the_numbering():
    shape = read_shape("3、林家，夜，内林母在批评林真心。", "zh")
    assert (shape.number, shape.location, shape.strength) == ("3", "林家", "numbered")
    assert read_shape("林家，夜，内林母在批评林真心。", "zh") is None


@pytest.mark.parametrize(
    "line",
    [
        "12 305病房",  # no markers: digits after a bare space stay a second number
        "2 3个人走进来",
        "40 15 屋内，夜，内",  # a second number standing alone
        "街上，夜里很安静",  # one marker run into a word is no heading
        "他说：书房，夜，内那盏灯",  # speech
        "窗外，夜色很深，屋内没有开灯。",
    ],
)
def test_lines_that_stay_text(line):
    shape = read_shape(line, "zh")
    assert shape is None or shape.strength not in ("explicit", "standalone"), shape


def test_what_follows_the_markers_is_a_note_only_after_a_place():
    assert _fields("38. 日 外 县衙门口") == ("38", "县衙门口", "EXT", "DAY")
    # a number behind OCR debris before the markers: no place, so what follows is no note
    assert split_run_on_note("和  51. 黄昏 外 竹林") == ("和  51. 黄昏 外 竹林", "")
    assert _fields("8福生堂药房  日  外/内") == ("8", "福生堂药房", "INT/EXT", "DAY")
    assert _fields("40、鹿子霖家 日 内 / 外") == ("40", "鹿子霖家", "INT/EXT", "DAY")


def test_digit_places_segment_and_a_numbered_list_stays_in_its_scene():
    scenes, warnings = _scenes("zh_digit_places.txt")
    assert scenes == [
        ("1 医院大门 外 日", "1", "医院大门", "EXT", "DAY"),
        ("2 305病房 内 日", "2", "305病房", "INT", "DAY"),
        ("3  12号楼走廊  夜  内", "3", "12号楼走廊", "INT", "NIGHT"),
        ("4 7路公交车，外，日", "4", "7路公交车", "EXT", "DAY"),
        ("5 1201会议室,内,夜", "5", "1201会议室", "INT", "NIGHT"),
        ("6 3号仓库\u3000日\u3000外", "6", "3号仓库", "EXT", "DAY"),
        ("7 305病房 夜 内", "7", "305病房", "INT", "NIGHT"),
        # run into the number with no space: the numbering (7, then 9) reads it as scene 8 at 305病房
        ("8305病房 内 日", "8", "305病房", "INT", "DAY"),
        ("9 医院大门 外 日", "9", "医院大门", "EXT", "DAY"),
    ]
    assert len(warnings) == 1 and "1 换洗衣服" in warnings[0]


def test_run_on_notes_segment():
    scenes, warnings = _scenes("zh_run_on_notes.txt")
    assert scenes == [
        ("书房,夜,内李明的回忆", None, "书房", "INT", "NIGHT"),
        ("院子，日，外 李明的回忆", None, "院子", "EXT", "DAY"),
        ("厨房，内，日王芳做饭", None, "厨房", "INT", "DAY"),
        ("街道, 夜, 外 大雨", None, "街道", "EXT", "NIGHT"),
    ]
    assert warnings == []


def test_numbered_headings_with_a_sentence_run_on_and_a_list_inside_a_scene():
    scenes, _ = _scenes("zh_numbered_notes.txt")
    assert scenes == [
        ("1、教室，日，内 学生们在上自习。", "1", "教室", "INT", "DAY"),
        ("2、操场，日，外林真心在跑步。", "2", "操场", "EXT", "DAY"),
        ("3、林家，夜，内林母在批评林真心。", "3", "林家", "INT", "NIGHT"),
        ("4、巷口，夜，外", "4", "巷口", "EXT", "NIGHT"),
    ]
