"""Several items of a stage in one request: the instructions are sent once per group, the items
are numbered 1..n in the user message, and the reply (`batch_model(M)`) answers each by number.

The schema sent asks for exactly n answers numbered 1..n, so a server that enforces it answers
every item. Every item ends as a validated value or a `failures` row: a failed request is a
failures row for each of its items, except a reply cut at its limit (or a prompt too long for the
server's context), whose group is split in two and asked again; items a reply leaves out (a server
that does not enforce the schema) are asked again in smaller groups down to one item each
(`tasks.llm.client.retry`). Reply limits follow the number of items asked (`reply_limit`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence, TypeVar

from pydantic import BaseModel

from schemas.responses.batched import MAX_ITEMS, batch_model
from tasks.llm.client.protocol import LLMRequest, LLMResult
from tasks.llm.client.retry import SPLIT_STATUSES, regroup_missing, split_cut
from tasks.llm.requests.items import LLMBatch
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.llm.requests.shapes import RequestShape
from tasks.stage import StageContext

M = TypeVar("M", bound=BaseModel)
Render = Callable[[list[str]], dict[str, Any]]  # item ids (numbered 1..n in this order) -> prompt values
REPLY_FRAME_TOKENS = 128  # `{"items": [...]}`, numbers and whitespace around the answers
REPLY_SLACK = 1.0  # the stages' per-item figures are budgets already; a cut reply is retried larger


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
    items: Sequence[tuple[str, Sequence[str]]],
    cost: Mapping[str, int] | Callable[[str], int],
    budget: int,
    max_items: int = MAX_ITEMS,
) -> list[list[str]]:
    """Consecutive items grouped while the union of the parts they show (excerpts, records), each
    sent once per request, fits `budget` tokens; an item's parts are `(item id, part keys)`."""
    return list(iter_groups_by_shared(items, cost, budget, max_items))


def iter_groups_by_shared(
    items: Iterable[tuple[str, Sequence[str]]],
    cost: Mapping[str, int] | Callable[[str], int],
    budget: int,
    max_items: int = MAX_ITEMS,
) -> Iterator[list[str]]:
    """`group_by_shared`, each group given as soon as it is complete: a part's cost (a callable
    may render the part) is asked for only when an item showing it is reached, so a stage can send
    its first request before it has rendered every part."""
    price = cost if callable(cost) else (lambda key: cost.get(key, 0))
    group: list[str] = []
    shown: set[str] = set()
    used = 0
    limit = max(1, min(max_items, MAX_ITEMS))
    for item_id, keys in items:
        extra = sum(price(k) for k in set(keys) - shown)
        if group and (len(group) >= limit or used + extra > budget):
            yield group
            group, shown, used = [], set(), 0
            extra = sum(price(k) for k in set(keys))
        group.append(item_id)
        shown.update(keys)
        used += extra
    if group:
        yield group


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
        answer_count=len(ids),
    )


def reply_limit(per_item: int, n_items: int) -> int:
    """A reply limit in proportion to what is asked: the stage's tokens per answered item, with
    plus the JSON frame. Not floored by `[llm] max_tokens`: a model that
    loops inside a list is stopped after a few hundred tokens, not thousands (a limit that proves
    too short is raised once, then the group is split)."""
    return REPLY_FRAME_TOKENS + math.ceil(REPLY_SLACK * per_item * n_items)


def _max_tokens(per_item: int | None, n_items: int) -> int | None:
    return reply_limit(per_item, n_items) if per_item else None


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
    ctx: StageContext, shape: RequestShape, groups: Iterable[Sequence[str]], render: Render
) -> GroupedBatch[Any]:
    """Ask once per group (all groups at once through the client's bounded pool) and map answers back;
    `shape` (tasks.llm.requests.shapes) names the prompt, the answer model and the reply budget.

    `groups` may be lazy (a generator): each group's request is sent as soon as the group is formed
    and its prompt rendered, while the next groups are formed."""
    if ctx.llm is None:
        raise RuntimeError(f"stage {ctx.stage} asked for the LLM but none is configured")
    if isinstance(groups, Sequence):
        flat = [i for g in groups for i in g]
        if len(set(flat)) != len(flat):  # before any request is sent
            raise ValueError(f"stage {ctx.stage}: item ids must be unique per call")
    batch: GroupedBatch[Any] = GroupedBatch()
    prompt_id, tokens_per_item = shape.prompt_id, shape.reply_tokens_per_item
    seen: set[str] = set()

    def first_round() -> Iterator[list[str]]:
        for group in groups:
            if not group:
                continue
            if seen & set(group):
                raise ValueError(f"stage {ctx.stage}: item ids must be unique per call")
            seen.update(group)
            yield list(group)

    # Each round sends its groups at once; what a reply leads to (a split, a smaller group for the
    # items it left out, failures) is tasks.llm.client.retry's rule. Groups only shrink, so rounds end.
    pending: Iterable[list[str]] = first_round()
    tag = ""
    reasked: set[str] = set()
    while True:
        asked: list[list[str]] = []  # the groups in request order, as the requests are made

        def requests(rounds: Iterable[list[str]], tag: str = tag, asked: list[list[str]] = asked):
            for ids in rounds:
                asked.append(ids)
                group_tag = "#again" if ids and ids[0] in reasked else tag
                yield _request(ctx, prompt_id, ids, render, group_tag, _max_tokens(tokens_per_item, len(ids)))

        results = ctx.llm.map_structured(requests(pending), batch_model(shape.answer_model))
        next_round: list[list[str]] = []
        for ids, result in zip(asked, results):
            batch.calls.extend(result.calls)
            if result.value is None:
                halves = split_cut(ids) if result.status in SPLIT_STATUSES else []
                next_round += halves
                if not halves:
                    batch.failures.extend(_failure(result, i) for i in ids)
                continue
            group_ids = tuple(ids)
            for answer in result.value.items:
                if 1 <= answer.number <= len(ids) and ids[answer.number - 1] not in batch.values:
                    batch.values[ids[answer.number - 1]] = answer
                    batch.asked_with[ids[answer.number - 1]] = group_ids
            regrouped = regroup_missing(ids, [i for i in ids if i not in batch.values])
            next_round += regrouped.again
            reasked.update(i for group in regrouped.again for i in group)
            batch.failures.extend(_failure(result, i, regrouped.why_lost) for i in regrouped.lost)
        if not next_round:
            break
        pending, tag = next_round, "#split"
    return batch
