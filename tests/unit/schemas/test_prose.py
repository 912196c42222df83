"""Model-written prose keeps each sentence once: a looping small model's repeats are not stored, and
later prompts that show the text do not pay for them."""

from __future__ import annotations

from schemas.responses.hierarchy import EpisodeDescription
from schemas.responses.prose import without_repeats
from schemas.responses.summaries import WrittenSummary

LOOP = "Daniel comes in, cheerful, and sets the brass key on the desk. "


def test_a_looped_sentence_is_kept_once_and_its_cut_off_tail_dropped() -> None:
    text = "Daniel is at the radio. " + LOOP * 30 + "Daniel comes in, chee"
    assert without_repeats(text) == "Daniel is at the radio. " + LOOP.strip()


def test_text_without_repeats_comes_back_unchanged() -> None:
    for text in ["He ran.  She said, quietly, no. They left", "Yes, yes, yes.", "A storm. Then calm!"]:
        assert without_repeats(text) == text


def test_a_clause_repeated_inside_one_sentence_is_kept_once() -> None:
    text = "She waits by the door, watching the harbour lights, watching the harbour lights, until dawn."
    assert without_repeats(text) == "She waits by the door, watching the harbour lights, until dawn."


def test_chinese_sentences_are_compared_too() -> None:
    assert without_repeats("他走了。她哭了。他走了。她哭了。") == "他走了。她哭了。"


def test_an_episode_summary_is_cleaned_when_the_reply_is_read() -> None:
    answer = EpisodeDescription.model_validate(
        {"title": "The key", "summary": LOOP * 8 + "Maggie leaves.", "goal": ""}
    )
    assert answer.summary == LOOP + "Maggie leaves."


def test_a_written_summary_keeps_the_first_of_repeated_sentences() -> None:
    summary = WrittenSummary.model_validate(
        {
            "sentences": [
                {"text": "Ellis keeps the key.", "quotes": [1]},
                {"text": "ellis keeps  the key.", "quotes": [2]},
                {"text": "Maggie leaves.", "quotes": [3]},
            ]
        }
    )
    assert [(s.text, s.quotes) for s in summary.sentences] == [
        ("Ellis keeps the key.", [1]),
        ("Maggie leaves.", [3]),
    ]
