"""A whole-story question answered by the model from the summary hierarchy's quotes (prompt
answer_global/v1): the quotes `summary_search` found, numbered Q1, Q2 ... in story order with their
scenes, and the model writes the answer sentence by sentence, each naming the quotes it rests on (the
discipline of the written summaries, tasks.summaries.written_summaries).

A number outside the quotes is dropped and a sentence left with none is not kept, nor one repeating an
earlier sentence; each kept sentence is one citation, with the scenes of its quotes. A reply that keeps
no sentence, or no reply, gives the offline extractive answer, labelled offline, and a failures row.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any

from schemas.responses.summaries import MAX_ANSWER_SENTENCES, WrittenAnswer
from tasks.llm.client.protocol import LLMClient, LLMRequest
from tasks.query.agent_loop import RequestFactory, clip
from tasks.query.answer_global import KIND
from tasks.query.answer_types import Citation
from tasks.query.finalize import FinalAnswer
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow
from tasks.text import normalize_space

GLOBAL_PROMPT = "answer_global/v1"
WORDS_PER_SENTENCE = 20  # a written sentence retells about one or two quotes
HEADING_TOKENS = 10  # a scene is named, not read: a prose "heading" is the part's first words
REPLY_TOKENS_PER_WORD = 3  # the answer's words as tokens, with each sentence's JSON around them
REPLY_TOKENS_FLOOR = 256


def sentence_cap(words: int) -> int:
    """The most sentences an answer of `words` words is asked for."""
    return max(1, min(MAX_ANSWER_SENTENCES, round(words / WORDS_PER_SENTENCE)))


def reply_tokens(words: int) -> int:
    """The reply's token limit for an answer of `words` words: room for it, not for a loop."""
    return max(REPLY_TOKENS_FLOOR, REPLY_TOKENS_PER_WORD * words)


def quote_lines(rows: list[ToolRow]) -> str:
    """The quotes as the prompt shows them: `Q<n> [<scene ordinal>] <heading>: <text>`, in story order."""
    lines = []
    for number, row in enumerate(rows, start=1):
        scene = f"[{row.section_ordinal}] " if row.section_ordinal is not None else ""
        heading = clip(row.heading or "", HEADING_TOKENS)
        lines.append(f"Q{number} {scene}{heading}: {normalize_space(row.text)}")
    return "\n".join(lines)


def global_values(question: str, rows: list[ToolRow], words: int) -> dict[str, Any]:
    """Placeholder values of answer_global/v1."""
    return {
        "question": question,
        "words": words,
        "sentences": sentence_cap(words),
        "quotes": quote_lines(rows),
    }


def written_answer(
    reply: WrittenAnswer, rows: list[ToolRow], language: str, headings: dict[str, tuple[str, int]]
) -> tuple[FinalAnswer | None, str]:
    """The answer a reply supports: its sentences that name at least one of the quotes, each a citation
    of its quotes' scenes (story order); (None, why) when none is left. `headings`: section id ->
    (heading, ordinal)."""
    kept: list[tuple[str, list[ToolRow]]] = []
    seen: set[str] = set()
    unknown = repeated = 0
    for sentence in reply.sentences:
        numbers = list(dict.fromkeys(sentence.quotes))
        cited = [rows[n - 1] for n in numbers if 1 <= n <= len(rows) and rows[n - 1].section_id]
        unknown += len(numbers) - len(cited)
        text = normalize_space(sentence.text)
        if not text or not cited:
            continue  # a sentence without a source is not kept
        if text.casefold() in seen:
            repeated += 1
            continue
        seen.add(text.casefold())
        kept.append((text, sorted(cited, key=lambda r: (r.section_ordinal or 0, r.char_start or 0))))
    dropped = len(reply.sentences) - len(kept)
    if not kept:
        return None, f"none of {len(reply.sentences)} sentence(s) names one of the {len(rows)} quotes"
    citations = []
    for _, cited in kept:
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
    notes = [
        f"llm answer written from {len(rows)} quote(s) of the summary hierarchy: {len(kept)} sentence(s) kept"
        + (f", {dropped} dropped ({repeated} repeated, {unknown} quote number(s) unknown)" if dropped else "")
    ]
    text = ("" if language == "zh" else " ").join(t for t, _ in kept)
    return FinalAnswer(text, notes=notes, is_offline=False, kind=KIND, citations=citations), ""


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
        request = self.request_factory(GLOBAL_PROMPT, global_values(question, rows, words), "global")
        request = dataclasses.replace(request, max_tokens=reply_tokens(words))
        result = self.client.structured(request, WrittenAnswer)
        self.llm_calls.extend(result.calls)
        if result.value is None:
            self.failures.append(result.failure_row())
            return _offline(offline, result.status)
        headings = {
            str(r.section_id): (r.heading or "", r.section_ordinal or 0) for r in rows if r.section_id
        }
        final, problem = written_answer(result.value, rows, env.store.source.language, headings)
        if final is None:
            self.failures.append(_invalid_row(request, result.call_key, result.value, problem))
            return _offline(offline, f"invalid: {problem}")
        return final


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
