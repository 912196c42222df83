"""Run one prompt over many items of a document through the injected LLM client.

Every item ends either as a validated value or as a `failures` row with the reason; every
attempt is an `llm_calls` row. Stages call this and never see HTTP, retries or the cache.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Generic, Iterable, Iterator, Sequence, TypeVar

from pydantic import BaseModel

from tasks.llm.client.protocol import LLMRequest
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.stage import StageContext

M = TypeVar("M", bound=BaseModel)


@dataclass
class LLMBatch(Generic[M]):
    values: dict[str, M] = field(default_factory=dict)  # item id -> validated reply
    calls: list[dict[str, Any]] = field(default_factory=list)  # llm_calls rows
    failures: list[dict[str, str]] = field(default_factory=list)  # failures rows

    def extend(self, other: "LLMBatch[M]") -> None:
        self.values.update(other.values)
        self.calls.extend(other.calls)
        self.failures.extend(other.failures)


def build_requests(
    ctx: StageContext,
    prompt_id: str,
    items: Iterable[tuple[str, dict[str, Any]]],
    max_tokens: int | None = None,
    fields_from: type[BaseModel] | None = None,
) -> Iterator[LLMRequest]:
    """One request per (item id, placeholder values), in the document's language, rendered as the
    items come (lazily); an item id seen before is a ValueError. `fields_from`: the model whose
    fields the prompt lists, when not the reply's (`LLMRequest.fields_from`)."""
    prompt = load_prompt(prompt_id, ctx.document.language)
    seen: set[str] = set()
    for item_id, values in items:
        if item_id in seen:
            raise ValueError(f"stage {ctx.stage}: item ids must be unique per call")
        seen.add(item_id)
        yield LLMRequest(
            stage=ctx.stage,
            item_id=item_id,
            doc_id=ctx.doc_id,
            prompt_id=prompt.prompt_id,
            prompt_hash=prompt.sha256,
            messages=render_messages(prompt, values),
            max_tokens=max_tokens,
            fields_from=fields_from,
        )


def run_structured(
    ctx: StageContext,
    prompt_id: str,
    items: Iterable[tuple[str, dict[str, Any]]],
    response_model: type[M],
    max_tokens: int | None = None,
    fields_from: type[BaseModel] | None = None,
) -> LLMBatch[M]:
    """Ask the LLM once per item (bounded concurrency inside the client) and collect the outcome.

    `items` may be a generator: each item's request is sent as soon as it is built, so the CPU of
    building the next items overlaps with the requests in flight."""
    if ctx.llm is None:
        raise RuntimeError(f"stage {ctx.stage} asked for the LLM but none is configured")
    if isinstance(items, Sequence):
        ids = [item_id for item_id, _ in items]
        if len(set(ids)) != len(ids):  # before any request is sent
            raise ValueError(f"stage {ctx.stage}: item ids must be unique per call")
    batch: LLMBatch[M] = LLMBatch()
    requests = build_requests(ctx, prompt_id, items, max_tokens, fields_from)
    results = ctx.llm.map_structured(requests, response_model)
    for result in results:
        batch.calls.extend(result.calls)
        if result.value is not None:
            batch.values[result.request.item_id] = result.value
        else:
            batch.failures.append(result.failure_row())
    return batch
