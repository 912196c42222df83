"""The LLM finalizer (paper §3.3; appendix A.2 step 6, A.3): the answer model reads the evidence
packet — source passages first, since source text takes precedence over summaries — with the
selected reading-skill operators, and replies with an answer, the sections it rests on and
verbatim quotes.

The request is shaped per question (tasks.query.reader.shape, prompt final_answer/v2): the offline
reader's short answers are offered as candidates, a free answer is bounded by the question's form,
and with options one must be named. The baselines' LLM answers are shaped the same way.

The reply is checked against the packet: a chosen option must exist, cited sections must be
passages in the packet and quotes must occur in them. An unusable reply, or no reply, falls back
to the offline finalizer, labelled as such.
"""

from __future__ import annotations

import dataclasses
import json
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable

from schemas.responses.agent import FinalAnswerReply
from tasks.llm.client.protocol import LLMClient, LLMRequest, LLMResult
from tasks.query.agent_loop import RequestFactory, clip
from tasks.query.evidence.board import BoardItem, EvidenceBoard, Passage
from tasks.query.plan import QueryIntents
from tasks.query.reader.checks import confirm_option, rotated, screen_own_answer
from tasks.query.reader.finalize import FinalAnswer, Finalizer
from tasks.query.reader.offline import offline_finalizer, short_answer_candidates
from tasks.query.reader.shape import MAX_CANDIDATES, READER_PROMPT, as_final_reply, reader_request
from tasks.query.skills.cards import render_operators
from tasks.query.tools.env import ToolEnv
from tasks.text import count_tokens

MIN_QUOTE_TOKENS = 3  # shorter "quotes" match almost anywhere and prove nothing
LEAD_WORDS = 24  # a cited section without a verified quote is cited by its opening words
SkillRenderer = Callable[[list[str], str], str]
_PUNCTUATION = str.maketrans(
    {
        "‘": "'",
        "’": "'",
        "“": '"',
        "”": '"',
        "「": '"',
        "」": '"',
        "『": '"',
        "』": '"',
        "–": "-",
        "—": "-",
        "―": "-",
    }
)
_ELLIPSIS = re.compile(r"\.\.\.|…")
_EDGE = "\"'“”‘’「」『』 .…"


def normalized(text: str) -> str:
    """Text for quote matching: NFKC, lower case, plain quotes and dashes, no whitespace."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text).lower().translate(_PUNCTUATION))


def quote_in(quote: str, passage_text: str) -> bool:
    """Does `quote` occur in the passage? Parts elided with '...' must occur in order."""
    haystack, position = normalized(passage_text), 0
    parts = [normalized(part) for part in _ELLIPSIS.split(quote)]
    for part in (p for p in parts if p):
        found = haystack.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return any(parts)


def _options_block(options: list[str] | None, language: str) -> str:
    if not options:
        return (
            "回答形式：自由作答（没有选项）。"
            if language == "zh"
            else "Answer format: free text (no options)."
        )
    title = "选项：" if language == "zh" else "Options:"
    return "\n".join([title] + [f"{chr(65 + i)}. {option}" for i, option in enumerate(options)])


def _item_line(item: BoardItem) -> str:
    where = f" (§{item.row.section_ordinal})" if item.row.section_ordinal is not None else ""
    kind = f"[{item.row.kind}] " if item.channel == "narrative" else ""
    facts = "".join(f"\n    · {clip(fact.text, 40)}" for fact in item.facts)
    return f"- {kind}{clip(item.row.text, 80)}{where}{facts}"


def _passage_block(passage: Passage) -> str:
    heading = f" {passage.heading}:" if passage.heading else ""
    return f"[{passage.ordinal}]{heading}\n{passage.text.strip()}"


def final_values(
    question: str, options: list[str] | None, board: EvidenceBoard, skills_text: str, language: str
) -> dict[str, str]:
    """Placeholder values of the final_answer prompt."""
    none = "（无）" if language == "zh" else "(none)"
    lines = lambda items: "\n".join(_item_line(i) for i in items) or none  # noqa: E731
    return {
        "question": question,
        "options": _options_block(options, language),
        "skills": skills_text or ("阅读技能：无。" if language == "zh" else "Reading skills: none."),
        "passages": "\n\n".join(_passage_block(p) for p in board.passages) or none,
        "entities": lines(board.entities),
        "relations": lines(board.relations),
        "narrative": lines(board.narrative),
    }


def passages_text(board: EvidenceBoard) -> str:
    return "\n".join(p.text for p in board.passages)


def invalid_row(request: LLMRequest, call_key: str, value: Any, problem: str) -> dict[str, str]:
    """The failures row of a reply that parsed but cannot be used (a failed call has its own)."""
    return {
        "doc_id": request.doc_id or "",
        "stage": request.stage,
        "item_id": request.item_id,
        "error": f"llm invalid answer: {problem}",
        "payload": json.dumps(
            {"prompt_id": request.prompt_id, "call_key": call_key, "reply": value.model_dump()},
            ensure_ascii=False,
        ),
    }


def _lead(passage: Passage) -> str:
    words = passage.text.split()
    return " ".join(words[:LEAD_WORDS]) + (" …" if len(words) > LEAD_WORDS else "")


def check_reply(
    reply: FinalAnswerReply, options: list[str] | None, board: EvidenceBoard
) -> tuple[FinalAnswer | None, str]:
    """The FinalAnswer a reply supports, or (None, why it is unusable). Unverifiable citations and
    quotes are dropped, not fatal: the answer stands and the notes say what was removed."""
    if not reply.answer.strip():
        return None, "empty answer"
    chosen = reply.chosen_option
    if options:
        if chosen is None:
            return None, "no option chosen"
        if not 0 <= chosen < len(options):
            return None, f"chosen option {chosen} is out of range for {len(options)} options"
    notes = [f"llm answer (confidence {reply.confidence:.2f}): {clip(reply.answer, 80)}"]
    if not options and chosen is not None:
        notes.append(f"ignored chosen_option {chosen}: the question has no options")
        chosen = None
    ordinals = {p.ordinal for p in board.passages}
    cited = list(dict.fromkeys(o for o in reply.cited_ordinals if o in ordinals))
    unknown = sorted({o for o in reply.cited_ordinals if o not in ordinals})
    # Cited passages are searched first, so a quote is credited to the section the model meant.
    ranked = sorted(board.passages, key=lambda p: (p.ordinal not in cited, p.ordinal, p.char_start))
    quotes: list[tuple[str, str]] = []
    rejected = 0
    for quote in reply.quotes:
        text = quote.strip(_EDGE)
        home = (
            next((p for p in ranked if quote_in(text, p.text)), None)
            if count_tokens(text) >= MIN_QUOTE_TOKENS
            else None
        )
        if home is None:
            rejected += 1
        elif (home.section_id, text) not in quotes:
            quotes.append((home.section_id, text))
    quoted_sections = {section_id for section_id, _ in quotes}
    for ordinal in cited:
        passage = next(p for p in board.passages if p.ordinal == ordinal)
        if passage.section_id not in quoted_sections:
            quotes.append((passage.section_id, _lead(passage)))
            quoted_sections.add(passage.section_id)
    notes.append(
        f"cited sections {cited}"
        + (f"; dropped citations not in the packet {unknown}" if unknown else "")
        + (f"; dropped {rejected} quote(s) not found verbatim in the passages" if rejected else "")
    )
    text = options[chosen] if options and chosen is not None else reply.answer.strip()
    return FinalAnswer(text, chosen, None, quotes, notes, is_offline=False), ""


@dataclass(frozen=True)
class ReadingRequest:
    """What every reader request of one question shares (the options and candidates vary)."""

    question: str
    board: EvidenceBoard
    skills_text: str
    intents: QueryIntents
    language: str


@dataclass
class LLMFinalizer:
    """A `Finalizer` (tasks.query.answer_nkw) backed by an LLM, falling back to `fallback`; one per question.

    `failures` (failures rows) and `llm_calls` (llm_calls rows) record what happened."""

    client: LLMClient
    request_factory: RequestFactory
    fallback: Finalizer = offline_finalizer
    render_skills: SkillRenderer | None = None  # (skill ids, language) -> operator text
    # (env, question, options, intents, board) -> option verdict text, run for multiple choice when the
    # option_admission reading skill is selected (tasks.query.reader.option_audit)
    audit_options: Callable[..., str] | None = None
    failures: list[dict[str, str]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)

    def __call__(
        self,
        env: ToolEnv,
        question: str,
        options: list[str] | None,
        intents: QueryIntents,
        board: EvidenceBoard,
        skills: list[str],
    ) -> FinalAnswer:
        """The checked LLM answer, or the fallback answer labelled offline."""
        language = env.store.source.language
        skills_text = self._skills(skills, language)
        if options and self.audit_options is not None and "option_admission" in skills:
            skills_text = "\n\n".join(
                t for t in (skills_text, self.audit_options(env, question, options, intents, board)) if t
            )
        # The offline reader runs first: its short answers are the candidates offered to the model,
        # its option pick is shown beside the options, and it is the answer when the model fails.
        offline = self.fallback(env, question, options, intents, board, skills)
        candidates = [] if options else short_answer_candidates(env, question, intents, board, MAX_CANDIDATES)
        read = ReadingRequest(question, board, skills_text, intents, language)
        request, result = self._read(read, options, candidates, offline.chosen_option, "final")
        if result.value is None:
            return self._offline(offline, result.status)
        reply, taken = as_final_reply(result.value, candidates)
        if taken is None:
            verdict = screen_own_answer(reply.answer, question, candidates, passages_text(board))
            if verdict.action == "refuse":
                return self._offline(offline, f"its own answer did not stand: {verdict.note}", overruled=True)
            if verdict.action == "candidate":
                taken = verdict.number
                reply = reply.model_copy(update={"answer": candidates[taken - 1]})
        final, problem = check_reply(reply, options, board)
        if final is None:
            self.failures.append(invalid_row(request, result.call_key, result.value, problem))
            return self._offline(offline, f"invalid: {problem}")
        if options and final.chosen_option is not None:
            option = confirm_option(
                final.chosen_option, offline.chosen_option, len(options), self._ask_rotated(read, options)
            )
            if not option.confirmed:
                return self._offline(offline, option.note, overruled=True)
            if option.note:
                final.notes = [*(final.notes or []), option.note]
        if taken is not None:
            final.notes = [*(final.notes or []), f"the model chose the offline reader's candidate {taken}"]
            final.kind = offline.kind if taken == 1 else ""
        return final

    def _read(
        self,
        read: ReadingRequest,
        options: list[str] | None,
        candidates: list[str],
        offline_choice: int | None,
        suffix: str,
    ) -> tuple[LLMRequest, LLMResult]:
        """One reader request of this question's shape, sent; its calls (and a failed call's
        failures row) recorded."""
        values, reply_model = reader_request(
            final_values(read.question, options, read.board, read.skills_text, read.language),
            options,
            candidates,
            offline_choice,
            read.intents.form,
            read.language,
        )
        request = self.request_factory(READER_PROMPT, values, suffix)
        result = self.client.structured(request, reply_model)
        self.llm_calls.extend(result.calls)
        if result.value is None:
            self.failures.append(result.failure_row())
        return request, result

    def _ask_rotated(self, read: ReadingRequest, options: list[str]) -> Callable[[int | None], int | None]:
        """The request with the options rotated one place (tasks.query.reader.checks), as a function of
        the offline pick's rotated position, returning the model's rotated pick (None: no usable reply)."""

        def ask(offline_position: int | None) -> int | None:
            _, result = self._read(read, rotated(options), [], offline_position, "final_rotated")
            return None if result.value is None else as_final_reply(result.value, [])[0].chosen_option

        return ask

    def _skills(self, skills: list[str], language: str) -> str:
        if not skills:
            return ""
        render = self.render_skills or render_operators
        return render(skills, language)

    @staticmethod
    def _offline(answer: FinalAnswer, status: str, overruled: bool = False) -> FinalAnswer:
        """The offline answer, labelled offline: the model failed, or a check overruled its reading."""
        head = f"LLM answer not kept ({status})" if overruled else f"LLM answer failed ({status})"
        notes = [f"{head}: offline answer", *(answer.notes or [])]
        return dataclasses.replace(answer, notes=notes, is_offline=True)


def make_llm_finalizer(
    client: LLMClient,
    request_factory: RequestFactory,
    fallback: Finalizer = offline_finalizer,
    render_skills: SkillRenderer | None = None,
    audit_options: Callable[..., str] | None = None,
) -> LLMFinalizer:
    """The LLM finalizer for one question (a `Finalizer` with `failures` and `llm_calls`)."""
    return LLMFinalizer(client, request_factory, fallback, render_skills, audit_options)
