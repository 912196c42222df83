"""Small text helpers for composing offline titles, summaries and descriptions of episodes and
storylines from their parts, in English or Chinese."""

from __future__ import annotations

from collections.abc import Iterable

from tasks.text import normalize_space

_END = (".", "!", "?", "…", "。", "！", "？", "”", '"', "'")


def shorten(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, at a word boundary when there is one, with an ellipsis."""
    text = normalize_space(text)
    if len(text) <= limit:
        return text
    cut = text[: max(1, limit - 1)]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:，；：") + "…"


def sentence(text: str, language: str) -> str:
    """`text` as one sentence: stripped, ending in terminal punctuation."""
    text = normalize_space(text)
    if not text or text.endswith(_END):
        return text
    return text + ("。" if language == "zh" else ".")


def join_sentences(texts: Iterable[str], language: str, limit: int) -> str:
    """Distinct sentences joined in order (a space between English ones), at most `limit` characters."""
    seen: set[str] = set()
    parts: list[str] = []
    for text in texts:
        s = sentence(text, language)
        if s and s.lower() not in seen:
            seen.add(s.lower())
            parts.append(s)
    return shorten(("" if language == "zh" else " ").join(parts), limit)


def join_names(names: Iterable[str], language: str) -> str:
    """Names as a list: 'A, B and C' (en) or 'A、B和C' (zh)."""
    names = [n for n in names if n]
    if len(names) <= 1:
        return "".join(names)
    if language == "zh":
        return "、".join(names[:-1]) + "和" + names[-1]
    return ", ".join(names[:-1]) + " and " + names[-1]


def span_label(first: int, last: int, language: str) -> str:
    """'section 3' / 'sections 3–5' (en) or '第3节' / '第3–5节' (zh)."""
    if language == "zh":
        return f"第{first}节" if first == last else f"第{first}–{last}节"
    return f"section {first}" if first == last else f"sections {first}–{last}"
