"""The LLM reader's request shape (prompt final_answer/v2): what the model is offered and what its
reply may be, per question.

A small model asked for a free answer writes whole sentences of the story (ROUGE-L about half the
offline reader's) and, with options, names none in many replies. So the reply is shaped by the
question before the model writes a token:

- with options, `option` is one of the options' letters and required: an option is always named
  (a letter, not a 0-based number: the 0.5B model wrote 1 for the first option);
- without options, the offline reader's short answers are offered as numbered candidates; the
  model picks one by number or writes its own answer, whose length the question's form bounds
  (a who-question gets a name-sized slot, a why-question a clause).

The reply model is built per shape and cached, so its schema (and the server's grammar) is the same
for every question of that shape.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import Field, create_model

from schemas.responses.agent import FinalAnswerReply, Quote
from schemas.responses.base import ResponseModel
from tasks.query.question_form import QuestionForm

READER_PROMPT = "final_answer/v2"
MAX_CANDIDATES = 3
# Words of an answer of each form: a name or a place is a few words, a reason a clause. The reply's
# string limit is the words at a generous characters-per-word, so the grammar stops a rambling model.
ANSWER_WORDS = {"who": 8, "where": 10, "when": 10, "which": 10, "what": 14, "yesno": 10, "how": 20, "why": 24}
OTHER_WORDS = 16
CHARS_PER_WORD = 7
CJK_CHARS_PER_WORD = 2  # a Chinese answer of n "words" is about 2n characters


def answer_words(form: QuestionForm) -> int:
    """The most words a free answer to a question of this form needs."""
    return ANSWER_WORDS.get(form.wh, OTHER_WORDS)


def answer_chars(form: QuestionForm, language: str) -> int:
    per_word = CJK_CHARS_PER_WORD if language == "zh" else CHARS_PER_WORD
    return answer_words(form) * per_word


@lru_cache(maxsize=64)
def reader_reply_model(option_count: int, candidate_count: int, max_chars: int) -> type[ResponseModel]:
    """The reply model of one question shape: `option_count` options (0: free answer) or
    `candidate_count` offered candidates, a free answer of at most `max_chars` characters."""
    cited = (list[int], Field(max_length=4, description="section numbers [n] of the passages used"))
    quotes = (list[Quote], Field(max_length=3, description="short verbatim quotes copied from the passages"))
    confidence = (float, Field(ge=0, le=1))
    if option_count:
        choice = Literal[tuple(chr(65 + i) for i in range(option_count))]  # type: ignore[valid-type]
        return create_model(
            f"ReaderReplyOptions{option_count}",
            __base__=ResponseModel,
            answer=(str, Field(min_length=1, max_length=max_chars, description="the answer in a few words")),
            option=(choice, Field(description="letter of the chosen option")),
            cited_ordinals=cited,
            quotes=quotes,
            confidence=confidence,
        )
    pick = Literal[tuple(range(candidate_count + 1))]  # type: ignore[valid-type]
    return create_model(
        f"ReaderReplyCandidates{candidate_count}Chars{max_chars}",
        __base__=ResponseModel,
        candidate=(pick, Field(description="number of the candidate that answers; 0 when none does")),
        answer=(str, Field(min_length=1, max_length=max_chars, description="the short answer")),
        cited_ordinals=cited,
        quotes=quotes,
        confidence=confidence,
    )


def answer_form_block(
    options: list[str] | None, candidates: list[str], offline_choice: int | None, words: int, language: str
) -> str:
    """The part of the prompt that says what shape the answer takes: the options with the offline
    reader's pick, or the offered candidates and the word limit."""
    zh = language == "zh"
    if options:
        lines = ["选项：" if zh else "Options:"]
        lines += [f"{chr(65 + i)}. {option}" for i, option in enumerate(options)]
        if offline_choice is not None:
            letter = chr(65 + offline_choice)
            lines.append(
                f"文本匹配阅读器倾向于选项 {letter}（可能有误）。"
                if zh
                else f"A text-matching reader leans to option {letter} (it can be wrong)."
            )
        return "\n".join(lines)
    limit = f"答案最多 {words * CJK_CHARS_PER_WORD} 个字。" if zh else f"Answer in at most {words} words."
    if not candidates:
        return limit
    title = (
        "候选答案（从段落中摘出，可能有误）："
        if zh
        else "Candidate answers cut from the passages (they can be wrong):"
    )
    lines = [limit, title]
    lines += [f"{number}. {text}" for number, text in enumerate(candidates, start=1)]
    return "\n".join(lines)


def as_final_reply(reply: ResponseModel, candidates: list[str]) -> tuple[FinalAnswerReply, int | None]:
    """The reply in the checked form of `check_reply`, and the candidate it took (None: its own answer)."""
    picked = getattr(reply, "candidate", 0) or 0
    taken = picked if 0 < picked <= len(candidates) else None
    text = candidates[picked - 1] if taken else str(getattr(reply, "answer", "")).strip()
    final = FinalAnswerReply(
        answer=text or "-",
        chosen_option=ord(reply.option) - 65 if getattr(reply, "option", None) else None,
        cited_ordinals=list(getattr(reply, "cited_ordinals", [])),
        quotes=list(getattr(reply, "quotes", [])),
        confidence=float(getattr(reply, "confidence", 0.0)),
    )
    return final, taken


def reader_request(
    values: dict[str, str],
    options: list[str] | None,
    candidates: list[str],
    offline_choice: int | None,
    form: QuestionForm,
    language: str,
) -> tuple[dict[str, str], type[ResponseModel]]:
    """The v2 prompt's values (v1's, with the options moved into the answer form) and the reply model
    of this question's shape."""
    shaped = {k: v for k, v in values.items() if k != "options"}
    words = answer_words(form)
    shaped["answer_form"] = answer_form_block(options, candidates, offline_choice, words, language)
    model = reader_reply_model(len(options or []), len(candidates), answer_chars(form, language))
    return shaped, model
