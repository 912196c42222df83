"""The downstream prompts exist in English and Chinese with the same placeholders (the LLM-path
tests render the English ones with the values the stages send)."""

from __future__ import annotations

import pytest

from tasks.llm.requests.prompts import PLACEHOLDER, load_prompt

PROMPTS = (
    "judge_continuity/v1",
    "judge_continuity/v2",
    "critique_chain/v1",
    "extract_states/v1",
    "critique_states/v1",
)


@pytest.mark.parametrize("prompt_id", PROMPTS)
def test_english_and_chinese_variants_share_placeholders(prompt_id: str) -> None:
    english, chinese = load_prompt(prompt_id, "en"), load_prompt(prompt_id, "zh")
    assert chinese.language == "zh" and english.text != chinese.text
    assert set(PLACEHOLDER.findall(english.text)) == set(PLACEHOLDER.findall(chinese.text))
    assert "<!-- system -->" in chinese.text and "<!-- user -->" in chinese.text
