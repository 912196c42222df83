"""Scenes a question names: "In [46、EXT - ALLEY, SAME TIME], what …", "在[17 陈识家 内 日]这场戏中 …",
"… in scene 12". A named scene is where the answer is, so its passage is pinned to the evidence
whatever the retrievers rank first (the heading words alone rarely win a BM25 or vector race
against the question's content words).

A section is named when its whole heading appears in the question (not as the tail of a longer
number: "9、X" is not named by "59、X"), when a bracketed part of the question is its heading
without the number ("[理发店门口，日，外]" names "47、理发店门口，日，外"), or when the question gives
its scene number in a scene-number form ("46、", "第12场", "scene 12", "[17 …]") and at least half
of its heading's words follow in the question. Pure: takes the section rows."""

from __future__ import annotations

import re
from typing import Any, Iterable

from tasks.text import zh_number

MAX_NAMED = 3
MIN_HEADING_CHARS = 4  # shorter headings ("夜", "DAY") are ordinary words, not references
MIN_OVERLAP = 0.5
_NUMERAL = r"\d+|[零〇一二两三四五六七八九十百千]+"
# A number in a scene-number form: "46、", "[17 ", "【十 ", "第12场", "scene 12".
_SCENE_NUMBER = re.compile(
    rf"(?:^|[\[【(（\s,，:：])(?P<a>{_NUMERAL})\s*[、.．](?!\d)"
    rf"|[\[【](?P<b>{_NUMERAL})[\s、]"
    rf"|第\s*(?P<c>{_NUMERAL})\s*[场場幕]"
    rf"|\bscene\s+(?P<d>\d+)\b",
    re.IGNORECASE,
)
_BRACKETED = re.compile(r"[\[【]([^\]】]{2,80})[\]】]")
_LEADING_NUMBER = re.compile(rf"^\s*(?:第\s*)?(?:{_NUMERAL})\s*(?:[场場幕、.．:)）]|\s)\s*")


def _norm(text: str) -> str:
    text = str(text).replace("\u00a0", " ").replace("\u3000", " ").lower()
    return re.sub(r"\s+", " ", text).strip()


def _tokens(text: str) -> set[str]:
    """Latin words and CJK character pairs, without a leading scene number."""
    text = _LEADING_NUMBER.sub("", _norm(text))
    cjk = re.sub(r"[^\u4e00-\u9fff]", "", text)
    words = set(re.findall(r"[a-z0-9']+", text))
    return words | {cjk[i : i + 2] for i in range(len(cjk) - 1)} | (set(cjk) if len(cjk) == 1 else set())


def question_scene_numbers(question: str) -> set[int]:
    """Scene numbers the question gives in a scene-number form."""
    numbers = set()
    for match in _SCENE_NUMBER.finditer(question):
        value = zh_number(next(g for g in match.groups() if g))
        if value is not None:
            numbers.add(value)
    return numbers


def named_sections(sections: Iterable[dict[str, Any]], question: str) -> list[str]:
    """Section ids the question names, best match first (at most MAX_NAMED)."""
    asked = _norm(question)
    asked_tokens = _tokens(question)
    numbers = question_scene_numbers(question)
    # A bracketed heading without its number; with a number, the whole-heading rule decides.
    bracketed = {_norm(b) for b in _BRACKETED.findall(question) if not _LEADING_NUMBER.match(_norm(b))}
    scored: list[tuple[float, int, str]] = []
    for row in sections:
        if row.get("section_kind") == "preamble":
            continue
        heading = _norm(row.get("heading") or "")
        if len(heading) < MIN_HEADING_CHARS:
            continue
        ordinal = int(row.get("ordinal") or 0)
        if re.search(r"(?<![0-9零〇一二两三四五六七八九十百千])" + re.escape(heading), asked):
            scored.append((2.0 + len(heading) / 1000, ordinal, row["section_id"]))
            continue
        if _LEADING_NUMBER.sub("", heading) in bracketed:
            scored.append((1.9, ordinal, row["section_id"]))
            continue
        raw_number = str(row.get("scene_number") or "").strip()
        number = zh_number(raw_number.lstrip("0") or "0") if raw_number else None
        if number is None or number not in numbers:
            continue
        words = _tokens(heading)
        overlap = len(words & asked_tokens) / len(words) if words else 1.0
        if overlap >= MIN_OVERLAP:
            scored.append((1.0 + overlap, ordinal, row["section_id"]))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return list(dict.fromkeys(section_id for _, _, section_id in scored))[:MAX_NAMED]
