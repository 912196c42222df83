"""Compact one-line records for grouped LLM requests: what an item carries into a prompt is cut
to what its decision needs (the first words of a description, distinct names, merged context
windows), so a request pays for each fact once."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from tasks.text import CJK_CHAR, normalize_space

_CLAUSE_END = re.compile(r"(?<=[.!?;。！？；])\s*")


def first_words(text: str, limit: int) -> str:
    """`text` cut to its first `limit` words (CJK: characters), with an ellipsis when cut."""
    text = normalize_space(text)
    if CJK_CHAR.search(text):
        return text if len(text) <= limit else text[:limit].rstrip("，、；：") + "…"
    words = text.split(" ")
    if len(words) <= limit:
        return text
    return " ".join(words[:limit]).rstrip(",;:") + "…"


def first_sentences(text: str, limit: int) -> str:
    """Whole leading sentences of `text` up to `limit` words (CJK: characters); at least the
    first sentence, itself cut to `limit` words when it is longer."""
    parts = [p for p in _CLAUSE_END.split(normalize_space(text)) if p]
    kept: list[str] = []
    used = 0
    for part in parts:
        size = len(part) if CJK_CHAR.search(part) else len(part.split(" "))
        if kept and used + size > limit:
            break
        kept.append(part)
        used += size
    joined = ("" if CJK_CHAR.search(text) else " ").join(kept)
    return first_words(joined, limit)


def distinct_names(name: str, others: Iterable[str]) -> list[str]:
    """Other names of an entity, without its own name and without case variants of one another."""
    seen = {normalize_space(name).casefold()}
    kept = []
    for other in others:
        key = normalize_space(str(other)).casefold()
        if key and key not in seen:
            seen.add(key)
            kept.append(normalize_space(str(other)))
    return kept


def merged_windows(spans: Sequence[tuple[int, int]], length: int, context: int) -> list[tuple[int, int]]:
    """Context windows `[start - context, end + context)` around spans of one text of `length`
    characters, overlapping windows merged (so a passage is shown once), in text order."""
    merged: list[list[int]] = []
    for start, end in sorted(spans):
        left, right = max(0, start - context), min(length, end + context)
        if merged and left <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], right)
        else:
            merged.append([left, right])
    return [(a, b) for a, b in merged]
