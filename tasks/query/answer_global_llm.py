"""A whole-story question answered by the model from the summary hierarchy's quotes (prompt
answer_global/v1): the quotes `summary_search` found, in story order with their scenes, and the model
writes the answer sentence by sentence, each naming the quotes it rests on (the discipline of the
written summaries, tasks.summaries.written_summaries).

The quotes are asked in consecutive parts of about `PART_WORDS` words, numbered Q1, Q2 ... within each
part, and each part is written at its share of the answer's words: asked for a 400-word answer over 30
quotes at once, the 0.5B model retold the first three and then repeated one sentence until its
limit; a part is a request it can finish, and the parts cover the story from beginning to end.

A number outside the part's quotes is dropped, and a sentence left with none is not kept, nor one
repeating an earlier sentence (word for word or nearly); each kept sentence is one citation, with the
scenes of its quotes. When a part's reply fails or keeps no sentence, the answer is the offline
extractive one, labelled offline, with a failures row: the answer is the model's throughout or not.
"""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from typing import Any

from schemas.responses.summaries import MAX_ANSWER_SENTENCES, WrittenAnswer
from tasks.llm.client.protocol import LLMClient, LLMRequest
from tasks.query.agent_loop import RequestFactory, clip
from tasks.query.answer_global import KIND
from tasks.query.answer_types import Citation
from tasks.query.reader.finalize import FinalAnswer
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow
from tasks.text import TOKEN, count_words, normalize_space

GLOBAL_PROMPT = "answer_global/v1"
PART_WORDS = 100  # quote words a request shows: a few sentences for the model to write
WORDS_PER_SENTENCE = 20  # a written sentence retells about one or two quotes
HEADING_TOKENS = 10  # a scene is named, not read
REPLY_TOKENS_PER_WORD = 3  # the part's words as tokens, with each sentence's JSON around them
REPLY_TOKENS_FLOOR = 192
# A screenplay heading's own scene numbers ("12 INT. HARBOUR - DAY 12", "12、日 内"), left out too
SCENE_NUMBER = re.compile(r"^\s*\d+[A-Z]?(?:[.、]\s*|\s+)|\s+\d+[A-Z]?\s*$")
NEAR_REPEAT = 0.8  # word overlap (Jaccard) at which a sentence repeats an earlier one


def sentence_cap(words: int) -> int:
    """The most sentences a part of `words` words is asked for."""
    return max(1, min(MAX_ANSWER_SENTENCES, round(words / WORDS_PER_SENTENCE)))


def reply_tokens(words: int) -> int:
    """The reply's token limit for a part of `words` words: room for it, not for a loop."""
    return max(REPLY_TOKENS_FLOOR, REPLY_TOKENS_PER_WORD * words)


def story_parts(sizes: list[int], part_words: int = PART_WORDS) -> list[list[int]]:
    """Positions of quotes of `sizes` words in consecutive parts of about `part_words` words each (a
    short tail joins the part before it)."""
    parts: list[list[int]] = []
    size = 0
    for position, words in enumerate(sizes):
        if not parts or size >= part_words:
            parts.append([])
            size = 0
        parts[-1].append(position)
        size += words
    if len(parts) > 1 and sum(sizes[p] for p in parts[-1]) < part_words / 2:
        parts[-2].extend(parts.pop())
    return parts


def quote_lines(rows: list[ToolRow], headings: bool = True) -> str:
    """The quotes as the prompt shows them, in story order: `Q<n> (<scene heading>): <text>`, or
    `Q<n>: <text>` without `headings` (prose, whose part "headings" are its first words: the 0.5B model
    copied them into its sentences). No other number is shown: given `Q1 [5]: ...`, the model cited
    the scene numbers as quote numbers (the scenes of a quote are known without the model)."""
    lines = []
    for number, row in enumerate(rows, start=1):
        heading = SCENE_NUMBER.sub("", clip(row.heading or "", HEADING_TOKENS)).strip() if headings else ""
        lines.append(f"Q{number}{f' ({heading})' if heading else ''}: {normalize_space(row.text)}")
    return "\n".join(lines)


def global_values(
    question: str, rows: list[ToolRow], words: int, part: int, parts: int, headings: bool = True
) -> dict[str, Any]:
    """Placeholder values of answer_global/v1 for part `part` (1-based) of `parts`, `words` long."""
    return {
        "question": question,
        "part": part,
        "parts": parts,
        "words": words,
        "sentences": sentence_cap(words),
        "quotes": quote_lines(rows, headings),
    }


def _terms(text: str) -> set[str]:
    return {t.casefold() for t in TOKEN.findall(text) if t.isalnum()}


def _repeats(text: str, earlier: list[set[str]]) -> bool:
    terms = _terms(text)
    return any(len(terms & e) >= NEAR_REPEAT * len(terms | e) for e in earlier if terms | e)


@dataclass
class Written:
    """The sentences kept so far, each with the quotes it rests on (story order), and what was dropped."""

    sentences: list[tuple[str, list[ToolRow]]] = field(default_factory=list)
    repeated: int = 0
    unknown: int = 0  # quote numbers outside the part's quotes

    def keep(self, reply: WrittenAnswer, rows: list[ToolRow]) -> int:
        """Keep the sentences of one part's reply that name a quote of `rows` and repeat none kept
        before; the number kept."""
        before = len(self.sentences)
        earlier = [_terms(text) for text, _ in self.sentences]
        for sentence in reply.sentences:
            numbers = list(dict.fromkeys(sentence.quotes))
            cited = [rows[n - 1] for n in numbers if 1 <= n <= len(rows) and rows[n - 1].section_id]
            self.unknown += len(numbers) - len(cited)
            text = normalize_space(sentence.text)
            if not text or not cited:
                continue  # a sentence without a source is not kept
            if _repeats(text, earlier):
                self.repeated += 1
                continue
            earlier.append(_terms(text))
            self.sentences.append(
                (text, sorted(cited, key=lambda r: (r.section_ordinal or 0, r.char_start or 0)))
            )
        return len(self.sentences) - before

    def answer(self, language: str, headings: dict[str, tuple[str, int]], note: str) -> FinalAnswer:
        """The written answer: its sentences joined, one citation each (`headings`: section id ->
        (heading, ordinal))."""
        citations = []
        for _, cited in self.sentences:
            section_ids = list(dict.fromkeys(str(r.section_id) for r in cited))
            heading, ordinal = headings.get(section_ids[0], ("", 0))
            citations.append(
                Citation(
                    section_ids[0],
                    heading,
                    ordinal,
                    " … ".join(normalize_space(r.text) for r in cited),
                    section_ids=tuple(section_ids),
                    ordinals=tuple(headings.get(s, ("", 0))[1] for s in section_ids),
                )
            )
        text = ("" if language == "zh" else " ").join(t for t, _ in self.sentences)
        return FinalAnswer(text, notes=[note], is_offline=False, kind=KIND, citations=citations)


@dataclass
class LLMGlobalWriter:
    """Writes a whole-story answer from the quotes with the model, else gives the offline answer
    labelled offline; `failures` and `llm_calls` record what happened. One per question."""

    client: LLMClient
    request_factory: RequestFactory
    failures: list[dict[str, str]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(
        self, env: ToolEnv, question: str, rows: list[ToolRow], offline: FinalAnswer, words: int
    ) -> FinalAnswer:
        if not rows:
            return offline  # nothing to write from: the offline answer says so
        language = env.store.source.language
        is_screenplay = env.store.source.kind == "screenplay"  # scene headings name places and times
        sizes = [count_words(r.text, language) for r in rows]
        parts = story_parts(sizes)
        total = sum(sizes) or 1
        requests = []
        for number, part in enumerate(parts, start=1):
            share = max(WORDS_PER_SENTENCE, round(words * sum(sizes[p] for p in part) / total))
            quoted = [rows[p] for p in part]
            values = global_values(question, quoted, share, number, len(parts), is_screenplay)
            request = self.request_factory(GLOBAL_PROMPT, values, f"global{number}")
            requests.append(dataclasses.replace(request, max_tokens=reply_tokens(share)))
        results = self.client.map_structured(requests, WrittenAnswer)
        written, problems = Written(), []
        for number, (part, request, result) in enumerate(zip(parts, requests, results), start=1):
            self.llm_calls.extend(result.calls)
            if result.value is None:
                self.failures.append(result.failure_row())
                problems.append(f"part {number}: {result.status}")
            elif not written.keep(result.value, [rows[p] for p in part]):
                problem = (
                    f"none of {len(result.value.sentences)} sentence(s) names one of its {len(part)} quotes"
                )
                self.failures.append(_invalid_row(request, result.call_key, result.value, problem))
                problems.append(f"part {number}: invalid: {problem}")
        if problems:
            return _offline(offline, "; ".join(problems))
        headings = {
            str(r.section_id): (r.heading or "", r.section_ordinal or 0) for r in rows if r.section_id
        }
        note = (
            f"llm answer written from {len(rows)} quote(s) of the summary hierarchy in {len(parts)} part(s): "
            f"{len(written.sentences)} sentence(s) kept, {written.repeated} repeated and "
            f"{written.unknown} unknown quote number(s) dropped"
        )
        return written.answer(language, headings, note)


def _offline(answer: FinalAnswer, status: str) -> FinalAnswer:
    notes = [f"LLM answer failed ({status}): offline answer", *(answer.notes or [])]
    return dataclasses.replace(answer, notes=notes, is_offline=True)


def _invalid_row(request: LLMRequest, call_key: str, reply: WrittenAnswer, problem: str) -> dict[str, str]:
    payload = {"prompt_id": request.prompt_id, "call_key": call_key, "reply": reply.model_dump()}
    return {
        "doc_id": request.doc_id or "",
        "stage": request.stage,
        "item_id": request.item_id,
        "error": f"llm invalid answer: {problem}",
        "payload": json.dumps(payload, ensure_ascii=False),
    }


def make_global_writer(client: LLMClient, request_factory: RequestFactory) -> LLMGlobalWriter:
    """The LLM writer of whole-story answers for one question (see `tasks.query.answer_nkw`)."""
    return LLMGlobalWriter(client, request_factory)
