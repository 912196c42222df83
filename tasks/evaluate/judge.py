"""The correctness judge (paper appendix B.2): each (question, answer, reference) triple is judged
`votes` times with stochastic sampling (vote n carries seed n, so no vote is another's cached
reply) and the majority label decides. Partly right counts as wrong (the prompt says so).

Pure functions over an injected LLM client; the evaluation flow stores one `judgments` row per vote.
A whole-story question's long answer is scored with a rubric instead (tasks.evaluate.rubric), through
the same voting (`ask_votes`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from schemas.responses.judge import JudgeReply
from tasks.llm.client.protocol import LLMRequest, LLMResult
from tasks.llm.requests.prompts import load_prompt, render_messages

JUDGE_PROMPT = "judge_answer/v1"
JUDGE_STAGE = "judge_answer"
JUDGE_MAX_TOKENS = 256


@dataclass(frozen=True)
class JudgeItem:
    """One sampled answer to judge."""

    benchmark: str
    qid: str
    doc_id: str
    sample: int
    question: str
    answer: str
    reference: str
    language: str = "en"
    references: tuple[str, ...] = ()  # every reference answer (SQuALITY's four), for the rubric
    rubric: bool = False  # a whole-story question: scored with the rubric, not labelled


def judge_requests(item: JudgeItem, votes: int, temperature: float) -> list[LLMRequest]:
    """`votes` requests for one item: same prompt, seed = vote number, the judge's temperature."""
    prompt = load_prompt(JUDGE_PROMPT, item.language)
    messages = render_messages(
        prompt,
        {"question": item.question, "answer": item.answer or "(no answer)", "reference": item.reference},
    )
    return [
        LLMRequest(
            stage=JUDGE_STAGE,
            item_id=f"{item.qid}:s{item.sample}:v{vote}",
            doc_id=item.doc_id,
            prompt_id=prompt.prompt_id,
            prompt_hash=prompt.sha256,
            messages=messages,
            max_tokens=JUDGE_MAX_TOKENS,
            temperature=temperature,
            seed=vote,
        )
        for vote in range(votes)
    ]


def vote_row(
    run_id: str, item: JudgeItem, vote: int, result: LLMResult[JudgeReply], judge_model: str
) -> dict[str, Any]:
    """One `judgments` row; a failed call is a row with status 'failed' and no label (it casts no vote)."""
    reply = result.value
    status = "failed" if reply is None else ("cached" if result.status == "cached" else "ok")
    reason = (
        reply.reason.strip()
        if reply is not None
        else f"judge call failed: {result.status}: {result.error or ''}"
    )
    return {
        "run_id": run_id,
        "benchmark": item.benchmark,
        "qid": item.qid,
        "sample": item.sample,
        "vote": vote,
        "kind": "label",
        "label": None if reply is None else bool(reply.is_correct),
        "rubric": None,
        "reason": reason[:600],
        "judge_model": judge_model,
        "call_id": result.call_key,
        "status": status,
        "prompt_hash": result.request.prompt_hash,
    }


def ask_votes(
    client: Any,
    run_id: str,
    items: Sequence[JudgeItem],
    votes: int,
    temperature: float,
    requests_of: Callable[[JudgeItem, int, float], list[LLMRequest]],
    reply_model: type,
    row_of: Callable[..., dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Ask every item's `votes` requests through the client's bounded concurrency, one reply model
    for all; returns (`judgments` rows made by `row_of`, `llm_calls` rows)."""
    requests = [request for item in items for request in requests_of(item, votes, temperature)]
    results = client.map_structured(requests, reply_model) if requests else []
    rows, calls = [], []
    for index, result in enumerate(results):
        item = items[index // votes]
        rows.append(row_of(run_id, item, index % votes, result, client.model))
        calls.extend({**call, "doc_id": item.doc_id} for call in result.calls)
    return rows, calls


def judge_items(
    client: Any, run_id: str, items: Sequence[JudgeItem], votes: int, temperature: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Label every item `votes` times. Returns (`judgments` rows, `llm_calls` rows)."""
    return ask_votes(client, run_id, items, votes, temperature, judge_requests, JudgeReply, vote_row)
