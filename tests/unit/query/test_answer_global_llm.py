"""The LLM's whole-story answer from numbered quotes: what the prompt shows, which written sentences
are kept (those naming a quote, once), and the citation of each with its quotes' scenes."""

from __future__ import annotations

import json

from schemas.responses.summaries import MAX_ANSWER_SENTENCES, WrittenAnswer
from tasks.llm.client.replies import response_schema
from tasks.llm.requests.prompts import PLACEHOLDER, PROMPTS_DIR, SECTION_MARK
from tasks.query.agent_loop import request_factory_for
from tasks.query.answer_global_llm import (
    GLOBAL_PROMPT,
    global_values,
    reply_tokens,
    sentence_cap,
    written_answer,
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
    reply = _reply(
        ("Margaret takes the brass key from the tower and hands it to Tom.", [2, 1, 2]),
        ("The keeper's ghost watches them.", [7]),  # no such quote: not kept
        ("margaret takes the brass key from the tower and hands it to tom.", [1]),  # a loop: not kept
        ("Tom hides the key in his van, as Margaret asked.", [3, 1]),
    )
    final, problem = written_answer(reply, _rows(), "en", HEADINGS)
    assert problem == "" and not final.is_offline and final.kind == "summary"
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
    assert final.notes == [
        "llm answer written from 3 quote(s) of the summary hierarchy: 2 sentence(s) kept, 2 dropped "
        "(1 repeated, 1 quote number(s) unknown)"
    ]


def test_a_reply_whose_sentences_name_no_quote_is_unusable():
    final, problem = written_answer(
        _reply(("Something happens.", [0]), ("More.", [4])), _rows(), "en", HEADINGS
    )
    assert final is None and problem == "none of 2 sentence(s) names one of the 3 quotes"


def test_a_chinese_answer_joins_its_sentences_without_spaces():
    final, _ = written_answer(
        _reply(("玛格丽特拿走钥匙。", [1]), ("汤姆把钥匙藏起来。", [3])), _rows(), "zh", HEADINGS
    )
    assert final.text == "玛格丽特拿走钥匙。汤姆把钥匙藏起来。"


def test_the_prompt_numbers_the_quotes_with_their_scenes_and_keeps_the_system_part_fixed():
    for language in ("en", "zh"):
        factory = request_factory_for("d", language, QUESTION)
        request = factory(GLOBAL_PROMPT, global_values(QUESTION, _rows(), 400), "global")
        system, user = request.messages
        assert QUESTION not in system["content"] and QUESTION in user["content"]
        assert f"Q3 [4] EXT. HARBOUR - DAY: {QUOTES[2][4]}" in user["content"]
        assert "400" in user["content"] and str(sentence_cap(400)) in user["content"]
        assert not any(text in system["content"] for *_, text in QUOTES)
    for path in sorted((PROMPTS_DIR / GLOBAL_PROMPT.split("/")[0]).glob("v1*.md")):
        parts = SECTION_MARK.split(path.read_text(encoding="utf-8"))
        assert PLACEHOLDER.findall(parts[parts.index("system") + 1]) == [], path.name


def test_the_reply_schema_is_fixed_and_bounded_and_so_is_the_reply_length():
    name, _, _ = response_schema(WrittenAnswer)
    full = WrittenAnswer.model_json_schema()
    sentence = full["$defs"]["WrittenSentence"]["properties"]
    assert name == "WrittenAnswer" and full["properties"]["sentences"]["maxItems"] == MAX_ANSWER_SENTENCES
    assert sentence["text"]["maxLength"] == 500 and sentence["quotes"]["minItems"] == 1
    assert json.loads(response_schema(WrittenAnswer, keep_lengths=True)[1]) is not None
    # the plot (400 words) asks 20 sentences of at most 1,200 tokens; an aspect (200) half as many
    assert (sentence_cap(400), reply_tokens(400)) == (20, 1200)
    assert (sentence_cap(200), reply_tokens(200)) == (10, 600)
    assert sentence_cap(5000) == MAX_ANSWER_SENTENCES and sentence_cap(3) == 1
