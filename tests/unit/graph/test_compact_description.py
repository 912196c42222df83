"""compact_description stops reading parts once the kept text is longer than the cut: the same
description as joining every distinct part first."""

from __future__ import annotations

import random
import re

from tasks.graph.names import compact_description


def _joined_then_cut(parts: list[str], max_chars: int) -> str:
    """The reference: every distinct part kept (none contained in one kept before), joined, then cut."""
    seen: set[str] = set()
    kept: list[str] = []
    for part in parts:
        text = re.sub(r"\s+", " ", part or "").strip()
        key = text.casefold()
        if text and key not in seen and not any(key in s for s in seen):
            seen.add(key)
            kept.append(text)
    joined = " ".join(kept)
    if len(joined) <= max_chars:
        return joined
    cut = joined[: max_chars - 1]
    boundary = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("! "), cut.rfind("? "))
    if boundary >= max_chars // 2:
        return cut[: boundary + 1].rstrip()
    space = cut.rfind(" ")
    return (cut[:space] if space >= max_chars // 2 else cut).rstrip(" ,;:") + "…"


def test_the_early_stop_gives_the_description_of_all_parts():
    rng = random.Random(3)
    words = "John walks. Nadia smiles! the van is red. keys? A B he she Tom 程勇。".split()
    for _ in range(5000):
        parts = [
            " ".join(rng.choice(words) for _ in range(rng.randint(0, 8))) for _ in range(rng.randint(0, 12))
        ]
        max_chars = rng.randint(5, 80)
        assert compact_description(parts, max_chars) == _joined_then_cut(parts, max_chars), (parts, max_chars)


def test_a_part_inside_one_kept_before_is_left_out():
    assert compact_description(["Tom drives the van.", "drives the VAN", "Tom sings."], 100) == (
        "Tom drives the van. Tom sings."
    )
