"""The LLM's whole-story answer from numbered quotes: the parts the quotes are asked in, what the prompt
shows, which written sentences are kept (those naming a quote, once), and the citation of each with
its quotes' scenes."""

from __future__ import annotations

import dataclasses

from schemas.responses.summaries import MAX_ANSWER_SENTENCES, WrittenAnswer
from tasks.llm.client.replies import response_schema
from tasks.llm.requests.prompts import PLACEHOLDER, PROMPTS_DIR, SECTION_MARK
from tasks.query.agent_loop import request_factory_for
from tasks.query.answer_global_llm import (
    GLOBAL_PROMPT,
    Written,
    global_values,
    quote_lines,
    reply_tokens,
    sentence_cap,
    story_parts,
)
from tasks.query.tools.types import ToolRow

QUESTION = "What is the plot of the story?"
QUOTES = [
    ("s1", "sec_a", 1, "INT. LIGHTHOUSE - NIGHT", "Margaret climbs the tower and takes the brass key."),
    ("s2", "sec_a", 1, "INT. LIGHTHOUSE - NIGHT", "She gives the key to Tom at the foot of the stairs."),
    ("s3", "sec_b", 4, "EXT. HARBOUR - DAY", "Tom hides the key in a tobacco tin in his van."),
]
HEADINGS = {"sec_a": ("INT. LIGHTHOUSE - NIGHT", 1), "sec_b": ("EXT. HARBOUR - DAY", 4)}


def _rows() -> list[ToolRow]:
    return [
        ToolRow("quote", sid, text, 1.0, "narrative", "d", section, heading, ordinal, char_start=10 * i)
        for i, (sid, section, ordinal, heading, text) in enumerate(QUOTES)
    ]


def _reply(*sentences: tuple[str, list[int]]) -> WrittenAnswer:
    return WrittenAnswer.model_validate({"sentences": [{"text": t, "quotes": q} for t, q in sentences]})


def test_sentences_naming_no_quote_or_repeating_one_are_dropped_and_each_kept_one_cites_its_scenes():
    written = Written()
    kept = written.keep(
        _reply(
            ("Margaret takes the brass key from the tower and hands it to Tom.", [2, 1, 2]),
            ("The keeper's ghost watches them.", [7]),  # no such quote: not kept
            ("margaret takes the brass key from the tower and hands it to tom.", [1]),  # a loop
            ("Margaret takes the brass key from the tower and hands it to Tom there.", [2]),  # nearly one
            ("Tom hides the key in his van, as Margaret asked.", [3, 1]),
        ),
        _rows(),
    )
    assert (kept, written.repeated, written.unknown) == (2, 2, 1)
    final = written.answer("en", HEADINGS, "note")
    assert not final.is_offline and final.kind == "summary" and final.notes == ["note"]
    assert final.text == (
        "Margaret takes the brass key from the tower and hands it to Tom. "
        "Tom hides the key in his van, as Margaret asked."
    )
    first, second = final.citations
    # the quotes a sentence names, in story order, with their scenes
    assert (first.section_id, first.ordinal, first.section_ids, first.ordinals) == (
        "sec_a",
        1,
        ("sec_a",),
        (1,),
    )
    assert first.quote == f"{QUOTES[0][4]} … {QUOTES[1][4]}"
    assert (second.section_ids, second.ordinals, second.heading) == (
        ("sec_a", "sec_b"),
        (1, 4),
        "INT. LIGHTHOUSE - NIGHT",
    )
    assert second.quote == f"{QUOTES[0][4]} … {QUOTES[2][4]}"


def test_a_part_whose_sentences_name_no_quote_keeps_nothing_and_a_later_part_numbers_its_own_quotes():
    written = Written()
    assert written.keep(_reply(("Something happens.", [0]), ("More.", [4])), _rows()) == 0
    assert written.keep(_reply(("Tom hides the key.", [1])), _rows()[2:]) == 1  # Q1 of the second part
    assert written.sentences[0][1][0].item_id == "s3" and written.unknown == 2


def test_a_chinese_answer_joins_its_sentences_without_spaces():
    written = Written()
    written.keep(_reply(("玛格丽特拿走钥匙。", [1]), ("汤姆把钥匙藏起来。", [3])), _rows())
    assert written.answer("zh", HEADINGS, "").text == "玛格丽特拿走钥匙。汤姆把钥匙藏起来。"


def test_the_quotes_are_asked_in_consecutive_parts_a_short_tail_joining_the_part_before():
    assert story_parts([30] * 7, part_words=100) == [[0, 1, 2, 3], [4, 5, 6]]
    assert story_parts([60, 60, 20], part_words=100) == [[0, 1, 2]]
    assert story_parts([], part_words=100) == []
    assert [p for part in story_parts([25] * 17, part_words=100) for p in part] == list(range(17))


def test_the_prompt_numbers_a_parts_quotes_with_their_scenes_and_keeps_the_system_part_fixed():
    for language in ("en", "zh"):
        factory = request_factory_for("d", language, QUESTION)
        request = factory(GLOBAL_PROMPT, global_values(QUESTION, _rows(), 120, 2, 4), "global2")
        system, user = request.messages
        assert QUESTION not in system["content"] and QUESTION in user["content"]
        assert f"Q3 (EXT. HARBOUR - DAY): {QUOTES[2][4]}" in user["content"]
        assert "[4]" not in user["content"]  # no scene number to take for a quote number
        assert all(str(n) in user["content"] for n in (120, sentence_cap(120), 2, 4))
        assert not any(text in system["content"] for *_, text in QUOTES)
    for path in sorted((PROMPTS_DIR / GLOBAL_PROMPT.split("/")[0]).glob("v1*.md")):
        parts = SECTION_MARK.split(path.read_text(encoding="utf-8"))
        assert PLACEHOLDER.findall(parts[parts.index("system") + 1]) == [], path.name
    # prose: a part's "heading" is its first words, which the model copied; a screenplay heading's own
    # scene numbers are left out
    assert quote_lines(_rows()[2:], headings=False) == f"Q1: {QUOTES[2][4]}"
    numbered = dataclasses.replace(_rows()[2], heading="12 EXT. HARBOUR - DAY 12")
    assert quote_lines([numbered]) == f"Q1 (EXT. HARBOUR - DAY): {QUOTES[2][4]}"


def test_the_reply_schema_is_fixed_and_bounded_and_so_is_the_reply_length():
    name, _, _ = response_schema(WrittenAnswer)
    full = WrittenAnswer.model_json_schema()
    sentence = full["$defs"]["WrittenSentence"]["properties"]
    assert name == "WrittenAnswer" and full["properties"]["sentences"]["maxItems"] == MAX_ANSWER_SENTENCES
    assert sentence["text"]["maxLength"] == 500 and sentence["quotes"]["minItems"] == 1
    # a part of 100 words asks at most 5 sentences; its reply tokens grow with its words, with a floor
    assert sentence_cap(100) == 5 and sentence_cap(5000) == MAX_ANSWER_SENTENCES and sentence_cap(3) == 1
    assert reply_tokens(100) < reply_tokens(200) and reply_tokens(1) == reply_tokens(10) > 0
