"""What an LLM states request shows of a scene: the lines where its characters can be seen or heard
(action sentences naming them or saying he/she, their parentheticals, their cue extensions), never
the spoken lines; every shown line a verbatim span of the scene."""

from __future__ import annotations

from tasks.character_states.observable import GAP, observable_spans, observable_text
from tasks.character_states.offline import Character
from tasks.continuity.scenes import Scene

SCENE = """INT. LAMP ROOM - NIGHT

Gulls cry outside. Rain on the glass.

MARGARET polishes the brass rail. She hums.

TOM (V.O.)
Maggie, open the door.

MARGARET
(quietly)
Not tonight, Tom. Not ever.

The lamp turns.
"""
ZH_SCENE = """1. 店内 日 内
窗外下着雨。
程勇坐在店里抽烟，一脸无奈。
程勇（低声）：谢了。
宾馆老板：房租什么时候交？
"""
MARGARET = Character("e1", "Margaret", ("MARGARET", "Maggie"))
TOM = Character("e2", "Tom", ("TOM",))


def _scene(text: str) -> Scene:
    return Scene("s1", 0, 1, text.splitlines()[0], "", "", "", 0, text)


def test_a_screenplay_scene_shows_what_a_camera_or_microphone_catches():
    shown = observable_text(_scene(SCENE), SCENE, "en", [MARGARET, TOM]).splitlines()
    assert shown == [
        "MARGARET polishes the brass rail.",
        "She hums.",
        "TOM (V.O.)",
        GAP,
        "MARGARET (quietly)",  # a direction shown with its speaker's cue
    ]
    assert "Not tonight" not in "\n".join(shown)  # what is said is not a visible state
    for start, end in observable_spans(_scene(SCENE), SCENE, "en", [MARGARET, TOM]):
        assert SCENE[start:end].strip() == SCENE[start:end] and SCENE[start:end]


def test_text_left_out_between_two_lines_is_marked():
    shown = observable_text(_scene(SCENE), SCENE, "en", [MARGARET]).splitlines()
    # Tom's cue is no candidate now: his V.O. is left out, and the gap is marked
    assert shown == ["MARGARET polishes the brass rail.", "She hums.", GAP, "MARGARET (quietly)"]


def test_a_scene_that_shows_none_of_its_characters_shows_nothing():
    text = "EXT. SEA - DAY\n\nWaves. Gulls wheel over the rocks.\n"
    assert observable_text(_scene(text), text, "en", [MARGARET]) == ""


def test_a_chinese_scene_keeps_action_and_a_cue_with_its_manner():
    chengyong = Character("e3", "程勇", ("程勇",))
    shown = observable_text(_scene(ZH_SCENE), ZH_SCENE, "zh", [chengyong])
    assert "程勇坐在店里抽烟，一脸无奈。" in shown
    assert "房租" not in shown and "窗外下着雨" not in shown
