"""Choose the quotes of an extractive summary: the most salient sentences, spread over the parts of
what is summarized (episodes of a storyline or of the whole work, sections of a community's story)
in proportion to each part's length, until a word budget is met.

Each step takes the best remaining sentence of the part whose quoted words are furthest below its
length's share (the Sainte-Laguë rule: highest length / (quoted + half the next sentence)), so the
story is covered in order instead of its most salient stretch being quoted at length. The rule does
not depend on the budget, so the order of the steps is the quotes' rank: the first r by rank are the
same selection with a smaller budget.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Candidate:
    position: int  # sentence position in text order
    group: Hashable  # the part of the summarized span it lies in
    salience: float
    n_words: int


def select_quotes(candidates: Sequence[Candidate], budget: int) -> list[int]:
    """Positions of the chosen sentences in rank order (their words reach `budget`, or all are taken)."""
    if budget <= 0 or not candidates:
        return []
    queues: dict[Hashable, list[Candidate]] = {}
    for candidate in candidates:
        queues.setdefault(candidate.group, []).append(candidate)
    for queue in queues.values():
        queue.sort(key=lambda c: (-c.salience, c.position))
    lengths = {group: sum(c.n_words for c in queue) for group, queue in queues.items()}
    taken = dict.fromkeys(queues, 0)
    chosen: list[int] = []
    words = 0
    while words < budget:
        open_groups = [group for group, queue in queues.items() if queue]
        if not open_groups:
            break
        # Furthest below its share first; ties go to the better sentence, then to story order.
        group = max(
            open_groups,
            key=lambda g: (
                lengths[g] / (taken[g] + queues[g][0].n_words / 2),
                queues[g][0].salience,
                -queues[g][0].position,
            ),
        )
        pick = queues[group].pop(0)
        chosen.append(pick.position)
        taken[group] += pick.n_words
        words += pick.n_words
    return chosen
