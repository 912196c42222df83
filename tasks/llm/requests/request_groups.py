"""Items of a stage grouped into requests with boundaries that stay put under local edits, so a
rebuild after an edit re-asks only the requests whose items changed (the LLM cache is keyed by what
was asked, so an unchanged request is served from it).

Filling each request up to a token budget from the start of a list moves every later boundary when
one item grows or an item is added: every later request then differs from its cached self. Here a
group also ends after any item whose stable key (what identifies the item, not where it sits in
the list) hashes under 1/`mean_items` of the hash range, whatever came before it; the budget and
the item limit still cut a group that grows too large, but those cuts depend only on the items
since the last content-defined cut. A changed item thus changes its own group and at most the
groups after it up to the next content-defined cut (content-defined chunking, as deduplicating
backup tools cut files)."""

from __future__ import annotations

import hashlib
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from schemas.responses.batched import MAX_ITEMS  # what a batched reply model accepts


def is_cut(key: str, chance: float) -> bool:
    """Whether a group ends after the item of stable key `key`: true for a share `chance` of keys,
    decided by the key's hash alone."""
    if chance >= 1:
        return True
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") < (1 << 64) * max(0.0, chance)


def iter_stable_groups(
    items: Iterable[tuple[str, str, Sequence[str]]],
    cost: Mapping[str, int] | Callable[[str], int],
    budget: int,
    max_items: int,
    mean_items: float | None = None,
) -> Iterator[list[str]]:
    """Consecutive items `(item id, stable key, part keys)` grouped while the parts they show (each
    sent once per request) fit `budget` tokens and the group holds at most `max_items`; a group also
    ends after an item whose key `is_cut` (`mean_items`: by default twice `max_items`, so most
    groups fill up to the budget and few more requests are made than by filling alone). Each group is given
    as soon as it is complete, a part's cost asked for only when an item showing it is reached."""
    price = cost if callable(cost) else (lambda key: cost.get(key, 0))
    limit = max(1, min(max_items, MAX_ITEMS))
    mean = mean_items if mean_items is not None else 2 * limit
    group: list[str] = []
    shown: set[str] = set()
    used = 0
    for item_id, key, parts in items:
        extra = sum(price(p) for p in set(parts) - shown)
        if group and (len(group) >= limit or used + extra > budget):
            yield group
            group, shown, used = [], set(), 0
            extra = sum(price(p) for p in set(parts))
        group.append(item_id)
        shown.update(parts)
        used += extra
        if is_cut(key, 1 / max(1.0, mean)):
            yield group
            group, shown, used = [], set(), 0
    if group:
        yield group


def stable_groups(
    items: Iterable[tuple[str, str, Sequence[str]]],
    cost: Mapping[str, int] | Callable[[str], int],
    budget: int,
    max_items: int,
    mean_items: float | None = None,
) -> list[list[str]]:
    """`iter_stable_groups` as a list."""
    return list(iter_stable_groups(items, cost, budget, max_items, mean_items))
