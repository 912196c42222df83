"""Several items of a stage in one request: the instructions are sent once per group, the items
are numbered 1..n in the user message, and the reply (`batch_model(M)`) answers each by number.

Every item ends as a validated value or a `failures` row: a failed request is a failures row for
each of its items; items a reply leaves out (or numbers it invents) are asked again once in a
group of their own, and still-missing items become failures rows of their own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence, TypeVar

from pydantic import BaseModel

from schemas.responses.batched import MAX_ITEMS, batch_model
from tasks.llm.client import LLMRequest, LLMResult
from tasks.llm.items import LLMBatch
from tasks.llm.prompts import load_prompt, render_messages
from tasks.stage import StageContext

M = TypeVar("M", bound=BaseModel)
Render = Callable[[list[str]], dict[str, Any]]  # item ids (numbered 1..n in this order) -> prompt values


@dataclass
class GroupedBatch(LLMBatch[M]):
    asked_with: dict[str, tuple[str, ...]] = field(default_factory=dict)  # item -> ids of its request


def group_items(
    ids: Sequence[str], costs: Sequence[int], budget: int, max_items: int = MAX_ITEMS
) -> list[list[str]]:
    """Consecutive items grouped while their summed cost fits `budget` (at least one per group)."""
    groups: list[list[str]] = []
    used = 0
    limit = max(1, min(max_items, MAX_ITEMS))
    for item_id, cost in zip(ids, costs):
        if not groups or len(groups[-1]) >= limit or used + cost > budget:
            groups.append([])
            used = 0
        groups[-1].append(item_id)
        used += cost
    return groups


def order_by_shared(items: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[str, Sequence[str]]]:
    """Items reordered so that items showing the same parts are neighbours (breadth first through
    shared parts, components in their first item's order), so `group_by_shared` sends each part
    to fewer requests; which items are asked does not change."""
    by_key: dict[str, list[int]] = {}
    for position, (_, keys) in enumerate(items):
        for key in keys:
            by_key.setdefault(key, []).append(position)
    placed = [False] * len(items)
    ordered: list[tuple[str, Sequence[str]]] = []
    for start in range(len(items)):
        if placed[start]:
            continue
        placed[start] = True
        queue = [start]
        while queue:
            position = queue.pop(0)
            ordered.append(items[position])
            for key in items[position][1]:
                for other in by_key[key]:
                    if not placed[other]:
                        placed[other] = True
                        queue.append(other)
    return ordered


def group_by_shared(
    items: Sequence[tuple[str, Sequence[str]]], cost: dict[str, int], budget: int, max_items: int = MAX_ITEMS
) -> list[list[str]]:
    """Consecutive items grouped while the union of the parts they show (excerpts, records), each
    sent once per request, fits `budget` tokens; an item's parts are `(item id, part keys)`."""
    groups: list[list[str]] = []
    shown: set[str] = set()
    used = 0
    limit = max(1, min(max_items, MAX_ITEMS))
    for item_id, keys in items:
        extra = sum(cost.get(k, 0) for k in set(keys) - shown)
        if not groups or len(groups[-1]) >= limit or used + extra > budget:
            groups.append([])
            shown, used = set(), 0
            extra = sum(cost.get(k, 0) for k in set(keys))
        groups[-1].append(item_id)
        shown.update(keys)
        used += extra
    return groups


def _request(
    ctx: StageContext, prompt_id: str, ids: list[str], render: Render, tag: str, max_tokens: int | None
) -> LLMRequest:
    prompt = load_prompt(prompt_id, ctx.document.language)
    return LLMRequest(
        stage=ctx.stage,
        item_id=f"{ids[0]}{tag}" if len(ids) == 1 else f"{ids[0]}{tag}+{len(ids) - 1}",
        doc_id=ctx.doc_id,
        prompt_id=prompt.prompt_id,
        prompt_hash=prompt.sha256,
        messages=render_messages(prompt, render(ids)),
        max_tokens=max_tokens,
    )


def _max_tokens(ctx: StageContext, per_item: int | None, n_items: int) -> int | None:
    """A reply limit that grows with the group (never below the configured one)."""
    return max(ctx.settings.llm.max_tokens, per_item * n_items) if per_item else None


def _failure(result: LLMResult, item_id: str, error: str | None = None) -> dict[str, str]:
    row = result.failure_row() or {
        "doc_id": result.request.doc_id or "",
        "stage": result.request.stage,
        "item_id": item_id,
        "error": "",
        "payload": json.dumps(
            {"status": "missing", "prompt_id": result.request.prompt_id, "call_key": result.call_key}
        ),
    }
    return {**row, "item_id": item_id, "error": error or row["error"]}


def run_grouped(
    ctx: StageContext,
    prompt_id: str,
    groups: Sequence[Sequence[str]],
    render: Render,
    response_model: type[M],
    tokens_per_item: int | None = None,
) -> GroupedBatch[M]:
    """Ask once per group (all groups at once through the client's bounded pool) and map answers back."""
    if ctx.llm is None:
        raise RuntimeError(f"stage {ctx.stage} asked for the LLM but none is configured")
    flat = [i for g in groups for i in g]
    if len(set(flat)) != len(flat):
        raise ValueError(f"stage {ctx.stage}: item ids must be unique per call")
    batch: GroupedBatch[M] = GroupedBatch()
    pending = [list(g) for g in groups if g]
    for attempt, tag in enumerate(("", "#again")):
        if not pending:
            break
        # Lazily: each group's request is sent as soon as its prompt is rendered, while the next
        # groups are rendered.
        requests = (
            _request(ctx, prompt_id, ids, render, tag, _max_tokens(ctx, tokens_per_item, len(ids)))
            for ids in pending
        )
        results = ctx.llm.map_structured(requests, batch_model(response_model))
        missing: list[list[str]] = []
        for ids, result in zip(pending, results):
            batch.calls.extend(result.calls)
            if result.value is None:
                batch.failures.extend(_failure(result, i) for i in ids)
                continue
            asked = tuple(ids)
            for answer in result.value.items:
                if 1 <= answer.number <= len(ids) and ids[answer.number - 1] not in batch.values:
                    batch.values[ids[answer.number - 1]] = answer
                    batch.asked_with[ids[answer.number - 1]] = asked
            left = [i for i in ids if i not in batch.values]
            if left and attempt == 0:
                missing.append(left)
            elif left:
                error = "llm missing: the batched reply left this item out, also when asked again"
                batch.failures.extend(_failure(result, i, error) for i in left)
        pending = missing
    return batch
