"""Scenes a question names by heading or scene number."""

from __future__ import annotations

from tasks.query.scene_reference import named_sections, question_scene_numbers


def sections(*headings: str, numbers: tuple[str | None, ...] = ()) -> list[dict]:
    return [
        {
            "section_id": f"s{i}",
            "ordinal": i,
            "heading": heading,
            "section_kind": "scene",
            "scene_number": numbers[i] if i < len(numbers) else None,
        }
        for i, heading in enumerate(headings)
    ]


def test_whole_heading_in_the_question_names_that_scene_not_a_shorter_number():
    rows = sections(
        "9、INT: SAL'S FAMOUS PIZZERIA--DAY", "59、INT: SAL'S FAMOUS PIZZERIA--DAY", "60、EXT. STREET - DAY"
    )
    asked = "In [59、INT: SAL'S FAMOUS PIZZERIA--DAY], what is Sal's objective in berating Mookie?"
    assert named_sections(rows, asked) == ["s1"]


def test_heading_with_tabs_named_with_spaces_and_two_scenes_of_a_span():
    rows = sections("3 津门武馆\t内\t日", "16 津门武馆\t内\t日", "55 郊外\t外\t日")
    asked = "从[3 津门武馆 内 日]到[55 郊外 外 日]，郑山傲对陈识的关系定位经历了怎样的转变？"
    assert named_sections(rows, asked) == ["s0", "s2"]


def test_bracketed_heading_without_its_number():
    rows = sections("46、理发店，夜，内", "47、理发店门口，日，外")
    assert named_sections(rows, "在[理发店门口，日，外]场景中，哪一个动作打破了沉默？") == ["s1"]


def test_scene_number_with_most_of_the_heading_words():
    rows = sections("41、EXT. YELLOW HILL - NIGHT", "14、EXT. YELLOW HILL - DAY", numbers=("41", "14"))
    asked = "In 41, Yellow Hill at night, what caused Li Mu Bai to intervene?"
    assert question_scene_numbers("In scene 41, who fights?") == {41}
    assert named_sections(rows, "In scene 41 on the yellow hill at night, who fights?") == ["s0"]
    assert named_sections(rows, asked) == []  # "41," is not a scene-number form


def test_no_reference_names_nothing():
    rows = sections(
        "1、INT. WAREHOUSE - EARLY MORNING", "夜", "2、EXT. STREET - DAY", numbers=("1", None, "2")
    )
    assert named_sections(rows, "What does Barry do in the warehouse at night?") == []
    assert named_sections(rows, "Why did he leave in 1990. After that?") == []
