"""track_character_states' grouped rounds (prompts v2): scenes in script order, grouped up to
`max_scenes_per_request` and the token budget, numbered 1..n per request, each block carrying
its own characters, notes (extract) or states (critic) and text; Chinese labels for Chinese."""

from __future__ import annotations

from schemas.config import CharacterStatesSettings
from tasks.character_states.requests import (
    CRITIC_PROMPT,
    EXTRACT_PROMPT,
    MAX_SCENE_CHARS,
    SceneAsk,
    round_values,
    scene_groups,
)
from tasks.llm.requests.prompts import load_prompt, render_messages


def _asks(n: int, text: str = "TOM opens the door.\nANN waves.") -> dict[str, SceneAsk]:
    return {
        f"s{k}#extract1": SceneAsk(f"s{k}#extract1", f"INT. ROOM {k} - DAY", "Tom, Ann", text, "(first pass)")
        for k in range(n)
    }


def test_groups_are_bounded_and_keep_script_order():
    asks = _asks(10)
    groups = scene_groups(list(asks.values()), False, "en", CharacterStatesSettings(max_scenes_per_request=4))
    assert [len(g) for g in groups] == [4, 4, 2]
    assert [i for g in groups for i in g] == list(asks)
    one_each = scene_groups(list(asks.values()), False, "en", CharacterStatesSettings(pack_tokens=1))
    assert len(one_each) == len(asks)


def test_blocks_are_numbered_and_carry_their_own_notes_or_states():
    asks = _asks(3)
    values = round_values(asks, list(asks)[1:], False, "en", "The Key")
    assert values["document_title"] == "The Key"
    assert values["scenes"].startswith(
        "Scene 1: INT. ROOM 1 - DAY\nCharacters: Tom, Ann\nReviewer notes: (first"
    )
    assert "Scene 2: INT. ROOM 2 - DAY" in values["scenes"] and "ROOM 0" not in values["scenes"]
    messages = render_messages(load_prompt(EXTRACT_PROMPT, "en"), values)
    assert "The Key" not in messages[0]["content"]  # the instructions are the same in every request
    critic = {
        "c#critic1": SceneAsk("c#critic1", "EXT. PIER", "Tom", "x" * (MAX_SCENE_CHARS + 50), "- Tom [action]")
    }
    shown = round_values(critic, ["c#critic1"], True, "en", "The Key")
    assert set(shown) == {"scenes"} and shown["scenes"].endswith("Extracted states:\n- Tom [action]")
    assert (
        "x" * MAX_SCENE_CHARS + "\n" in shown["scenes"] and "x" * (MAX_SCENE_CHARS + 1) not in shown["scenes"]
    )
    render_messages(load_prompt(CRITIC_PROMPT, "en"), shown)


def test_chinese_scenes_get_chinese_labels():
    asks = _asks(2, "汤姆推开门。")
    values = round_values(asks, list(asks), False, "zh", "钥匙")
    assert values["scenes"].startswith("场次 1：INT. ROOM 0 - DAY\n人物：Tom, Ann\n审核意见：")
    assert render_messages(load_prompt(EXTRACT_PROMPT, "zh"), values)[0]["content"].startswith("你记录")
