import pytest

from tasks.llm.requests.prompts import Prompt, PromptError, prompts_hash, render, render_messages


def test_render_requires_every_placeholder_and_value():
    assert render("Hello {{ name }}!", {"name": "Ann"}) == "Hello Ann!"
    with pytest.raises(PromptError, match="missing"):
        render("Hello {{name}} {{place}}", {"name": "Ann"})
    with pytest.raises(PromptError, match="without placeholder"):
        render("Hello", {"name": "Ann"})


def test_render_messages_splits_system_and_user():
    prompt = Prompt("demo/v1", "en", "<!-- system -->\nYou extract.\n<!-- user -->\nText: {{text}}\n")
    messages = render_messages(prompt, {"text": "A cat."})
    assert messages == (
        {"role": "system", "content": "You extract."},
        {"role": "user", "content": "Text: A cat."},
    )
    with pytest.raises(PromptError, match="user"):
        render_messages(Prompt("demo/v1", "en", "no parts {{text}}"), {"text": "x"})


def test_prompts_hash_is_empty_without_prompts():
    assert prompts_hash([]) == ""
