"""Whether a question is about the whole work rather than one place in it, and how: the plot
(whole work), a character's role, a relationship, the setting, or a theme or thing's significance.

"What is the plot of the story?", "Who is Hank Arapoulous, and what does he do in the story?", "How
does this society seek to deal with violence?" have no one scene that answers them: the answer is
spread over the story, and a retrieved packet of passages holds only part of it. A global question is
answered from the summary hierarchy at the length of a paragraph; any other keeps the short answer.

A question is global by its wording: a whole-work phrase (the plot, the setting, the story's theme),
or a question about someone or something "in the story" / "throughout" that names no moment ("at the
end", "after the crash", "in scene 12"). Offline reading of the surface (English and Chinese).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from schemas.config import AnswerSettings
from tasks.query.question_clauses import read_shape

SCOPES = ("work", "character", "relationship", "setting", "theme")

WORK = re.compile(
    r"\bplot\b|\bsynopsis\b|\bsummar(?:y|ise|ize)\b.{0,30}\b(?:story|film|movie|book|novel|script|plot)\b|"
    r"\bwhat (?:is|was) (?:the|this) (?:story|film|movie|book|novel|script) about\b|"
    r"\bwhat happens in (?:the|this) (?:story|film|movie|book|novel|script)\b|"
    r"剧情|故事梗概|故事概要|情节概要|主要内容|讲了什么|讲述了什么|讲的是什么"
)
SETTING = re.compile(
    r"\bsettings?\b.{0,20}\b(?:story|film|movie|book|novel)\b|\bdescribe the settings?\b|"
    r"\bwhat (?:is|are) the settings?\b|\bwhere (?:and when )?(?:does|is) (?:the|this) (?:story|film|movie) "
    r"(?:take place|set)\b|故事背景|背景设定|故事发生在(?:哪里|什么地方|何时)"
)
RELATIONSHIP = re.compile(r"\brelationship\b|\binteracts? with\b|\bdynamic between\b|关系")
# Wordings that ask what something means to the story as a whole.
THEME = re.compile(
    r"\bsignifican(?:ce|t)\b|\bimportance of\b|\bthemes?\b|\bsymboli[sz]|\bsymbol\b|"
    r"\bmessage of\b|\bmoral of\b|"
    r"\bhow (?:is|are) .{1,60} used\b|\bhow does (?:this|the) society\b|"
    r"\bwhat (?:is|are) [^?]{1,60}(?:,|\?)? *and why (?:is|are) (?:it|they|this) (?:important|significant)\b|"
    r"意义|象征|主题|寓意"
)
CHARACTER = re.compile(
    r"^\s*(?:who|who's|who’s)\s+(?:is|are|was|were)\b|\bwhat happens to\b|\bpersonality\b|\bcharacteri[sz]|"
    r"\btraits?\b|\bwhat role\b|\brole in\b|\bwhat (?:does|did) .{1,60} do (?:in|throughout)\b|"
    r"\bhow does .{1,60} (?:change|develop|evolve|grow)\b|是谁|什么样的人|性格|角色|命运"
)
# The whole story is asked about (without it, a character or theme question may be about a moment).
WHOLE = re.compile(
    r"\b(?:in|of|to|throughout|across|over) (?:the|this) (?:whole |entire )?(?:story|film|movie|book|novel|"
    r"script|narrative|tale)\b|\bthe (?:story|film|movie|book|novel)['’]s\b|\bthroughout\b|"
    r"\bover the course\b|\bover time\b|\bwho (?:is|are) [^?]{1,60}(?:,|\?)? *(?:and|what|how|why)\b|"
    r"整个故事|整部|全片|全剧|故事中|影片中|剧中"
)
DESCRIBE = re.compile(r"^\s*(?:please\s+)?describe\b")
# "What is the relationship between A and B?" asks about the whole of it; "what does X reveal about
# their relationship" asks about one moment of it.
WHOLE_RELATIONSHIP = re.compile(
    r"^\s*(?:please\s+)?(?:describe|what (?:is|was|are|were)|what['’]s|how would you describe)\b"
    r"[^?]{0,30}\brelationships?\b|\bhow does .{1,60} interact with\b"
)
# A moment of the story the question points at (a scene, a time, a span from one point to another):
# then it is about that place, however it is worded.
MOMENT = re.compile(
    r"\bat the (?:end|beginning|start|climax)\b|\b(?:first|last|final|opening|closing|initial) "
    r"(?:scene|chapter|part|section|encounter|confrontation|meeting)\b|\bscene\b|\bchapter\b|\bmoment\b|"
    r"\bafter\b|\bbefore\b|\bprior to\b|\bwhen\b|\bwhile\b|\bjust\b|\bfirst time\b|"
    r"\bfrom\b.{3,120}\b(?:to|through|until)\b|\b(?:int|ext)\b\.?\s|\d+\s*、|第\s*\d+\s*场|"
    r"第[一二三四五六七八九十百]+场|\[|【|这一?场|场戏|场景|场里|过程中|结尾|开头|之前|之后|时候|"
    r"从.{1,60}(?:到|转向|直到)"
)
# "Who are the three most central characters?" asks for names, not for a paragraph.
RANKING = re.compile(r"\b(?:most|main|central|major)\b.{0,30}\bcharacters\b|最(?:主要|重要|核心)")


@dataclass(frozen=True)
class QuestionScope:
    """What a global question asks for ("" for a local question)."""

    kind: str  # work | character | relationship | setting | theme | ""

    @property
    def is_global(self) -> bool:
        return bool(self.kind)


def read_scope(question: str) -> QuestionScope:
    """The question's scope: whole work, character, relationship, setting, theme, or local ("")."""
    lowered = question.strip().lower()
    if MOMENT.search(lowered) or RANKING.search(lowered):
        return QuestionScope("")
    if read_shape(question).kind in ("progression", "order"):
        return QuestionScope("")  # an event before or after others: one place (question_clauses)
    if WORK.search(lowered):
        return QuestionScope("work")
    if SETTING.search(lowered):
        return QuestionScope("setting")
    whole = bool(WHOLE.search(lowered)) or bool(DESCRIBE.match(lowered))
    if RELATIONSHIP.search(lowered):
        is_whole = whole or bool(WHOLE_RELATIONSHIP.search(lowered))
        return QuestionScope("relationship" if is_whole else "")
    if CHARACTER.search(lowered) and whole:
        return QuestionScope("character")
    if THEME.search(lowered) or whole:
        return QuestionScope("theme")
    return QuestionScope("")


def answer_words(question: str, options: list[str] | None, settings: AnswerSettings) -> int | None:
    """How long the answer to `question` should be, in words: a paragraph for the whole work, a
    shorter one for a character, relationship, setting or theme; None for a local or multiple-choice
    question (its short answer)."""
    if options:
        return None
    scope = read_scope(question)
    if not scope.is_global:
        return None
    return settings.work_answer_words if scope.kind == "work" else settings.aspect_answer_words
