"""Split a document into sections: scenes for screenplays; chapters, given sections or
paragraph groups for prose. Scene headings are parsed into interior/exterior, location and
time of day.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

from tasks.stage import StageContext, StageOutput
from schemas.ids import make_id
from tasks.text import count_tokens, normalize_text

_WS = "\\s\u00a0\u3000"
# "12、INT. BEDROOM - NIGHT", "4、INT BAR - NIGHT", "12 EXT. PARK - DAY 12", "INT./EXT. CAR - DAY"
EN_HEADING = re.compile(
    rf"^[{_WS}]*(?:(?P<num>\d+[A-Z]?)[{_WS}]*(?:[、.．:)]|-(?!\w))?[{_WS}]*)?"
    r"(?P<slug>(?P<ie>INT\.?[ ]?/[ ]?EXT|EXT\.?[ ]?/[ ]?INT|I/E|INT|EXT|EST)(?:\.|[ \t]|$).*?)"
    rf"(?:[{_WS}]+(?P=num))?[{_WS}]*$"
)
# Fountain's forced heading: a line starting with one period then a letter or digit.
FOUNTAIN_FORCED = re.compile(r"^\.(?=[A-Za-z0-9\u4e00-\u9fff])(?P<slug>.+?)\s*$")
# "1.     王子神油店日内", "9.街道夜外", "88..吕受益家日内", "第3场 日 内 王子神油店"
ZH_HEADING = re.compile(
    rf"^[{_WS}]*(?:(?P<num>\d+)[{_WS}]*[.、．]+|第(?P<num2>[0-9一二三四五六七八九十百]+)[场場幕])"
    rf"[{_WS}]*(?P<slug>[^{_WS}：:，,。！？!?“”\"（(][^：:，,。！？!?“”\"]{{0,29}}?)[{_WS}]*$"
)
ZH_TIME_PLACE = re.compile(r"(?P<time>清晨|黄昏|傍晚|白天|夜晚|深夜|凌晨|日|夜|晨|昏)?[\s\u00a0]*(?P<ie>内|外)?$")
CHAPTER = re.compile(
    r"^[ \t]*(?:#{1,3}[ \t]+\S.*|(?:CHAPTER|Chapter|PART|Part|BOOK|Book)[ \t]+(?:[IVXLCDM]+|\d+|[A-Za-z]+)\b.{0,60}"
    r"|[IVXLCDM]{1,7}\.?|\d{1,3}\.|第[一二三四五六七八九十百千0-9]+[章回节].{0,30})[ \t]*$"
)
EN_TIME = re.compile(r"\b(DAY|NIGHT|MORNING|EVENING|AFTERNOON|DAWN|DUSK|SUNSET|SUNRISE|NOON|MIDNIGHT|LATER|CONTINUOUS|SAME TIME|MOMENTS LATER|MAGIC HOUR)\b\.?\s*$")
ZH_TIME_NAMES = {"日": "DAY", "白天": "DAY", "夜": "NIGHT", "夜晚": "NIGHT", "深夜": "NIGHT", "凌晨": "DAWN",
                 "晨": "MORNING", "清晨": "MORNING", "昏": "DUSK", "黄昏": "DUSK", "傍晚": "EVENING"}


@dataclass(frozen=True)
class Heading:
    line_start: int
    text: str
    number: str | None
    interior: str | None
    location: str | None
    time_of_day: str | None


def _lines(text: str) -> Iterator[tuple[int, str]]:
    offset = 0
    for line in text.split("\n"):
        yield offset, line
        offset += len(line) + 1


def _mostly_upper(slug: str) -> bool:
    letters = [c for c in slug if c.isalpha() and c.isascii()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def parse_heading(line: str, language: str) -> Heading | None:
    """The scene heading in `line`, or None. `line_start` is filled by the caller."""
    stripped = line.strip()
    if not stripped or len(stripped) > 120:
        return None
    match = EN_HEADING.match(line)
    if match and _mostly_upper(match.group("slug")):
        interior, location, time_of_day = _split_en_slug(match.group("slug"), match.group("ie"))
        return Heading(0, stripped, match.group("num"), interior, location, time_of_day)
    match = FOUNTAIN_FORCED.match(stripped)
    if match and not stripped.startswith(".."):
        interior, location, time_of_day = _split_en_slug(match.group("slug"), None)
        return Heading(0, stripped, None, interior, location, time_of_day)
    if language == "zh":
        match = ZH_HEADING.match(line)
        if match:
            interior, location, time_of_day = _split_zh_slug(match.group("slug"))
            return Heading(0, stripped, match.group("num") or match.group("num2"), interior, location, time_of_day)
    return None


def _split_en_slug(slug: str, ie: str | None) -> tuple[str | None, str | None, str | None]:
    slug = slug.strip().rstrip(".").strip()
    interior = None
    if ie:
        compact = ie.replace(" ", "").replace(".", "").upper()
        interior = {"INT": "INT", "EXT": "EXT", "EST": "EXT"}.get(compact, "INT/EXT")
        slug = slug[len(ie):].lstrip(". ").strip()
    time_of_day = None
    time_match = EN_TIME.search(slug)
    if time_match:
        time_of_day = time_match.group(1)
        slug = slug[: time_match.start()].rstrip(" -–—.,")
    location = slug.strip(" -–—") or None
    return interior, location, time_of_day


def _split_zh_slug(slug: str) -> tuple[str | None, str | None, str | None]:
    slug = slug.strip()
    match = ZH_TIME_PLACE.search(slug)
    interior = time_of_day = None
    if match and (match.group("time") or match.group("ie")):
        interior = {"内": "INT", "外": "EXT"}.get(match.group("ie") or "")
        time_of_day = ZH_TIME_NAMES.get(match.group("time") or "")
        slug = slug[: match.start()].strip()
    return interior, slug or None, time_of_day


def find_headings(text: str, language: str) -> list[Heading]:
    headings = []
    for offset, line in _lines(text):
        heading = parse_heading(line, language)
        if heading is not None:
            headings.append(Heading(offset, *list(heading.__dict__.values())[1:]))
    return headings


def detect_kind(text: str, language: str, source: str = "", min_headings: int = 2) -> str:
    """'screenplay' when the text carries scene headings, else 'prose'."""
    if source.lower().endswith(".fountain"):
        return "screenplay"
    return "screenplay" if len(find_headings(text, language)) >= min_headings else "prose"


# --- section building ------------------------------------------------------------------

def _trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    while end > start and text[end - 1].isspace():
        end -= 1
    while start < end and text[start] in "\n\r":
        start += 1
    return start, end


def _section(doc_id: str, text: str, ordinal: int, start: int, end: int, heading: str, kind: str,
             number: str | None = None, interior: str | None = None, location: str | None = None,
             time_of_day: str | None = None) -> dict[str, Any]:
    start, end = _trim_span(text, start, end)
    return {
        "section_id": make_id("sec", doc_id, ordinal, start, end), "doc_id": doc_id, "ordinal": ordinal,
        "heading": heading, "section_kind": kind, "scene_number": number, "interior": interior,
        "location": location, "time_of_day": time_of_day, "char_start": start, "char_end": end,
        "text": text[start:end],
    }


def scenes(doc_id: str, text: str, headings: list[Heading]) -> list[dict[str, Any]]:
    """One section per scene heading; text before the first heading becomes a preamble (ordinal 0)."""
    rows = []
    if headings and text[: headings[0].line_start].strip():
        rows.append(_section(doc_id, text, 0, 0, headings[0].line_start, "Preamble", "preamble"))
    bounds = [h.line_start for h in headings] + [len(text)]
    for ordinal, heading in enumerate(headings, start=1):
        rows.append(_section(doc_id, text, ordinal, heading.line_start, bounds[ordinal], heading.text, "scene",
                             heading.number, heading.interior, heading.location, heading.time_of_day))
    return rows


def given_sections(doc_id: str, text: str, section_texts: list[str]) -> list[dict[str, Any]] | None:
    """Sections whose texts the input supplies (e.g. FairytaleQA), located in order in the text."""
    starts, cursor = [], 0
    for part in section_texts:
        probe = normalize_text(part).strip()[:200]  # the document text had its line endings unified
        position = text.find(probe, cursor) if probe else -1
        if position < 0:
            return None
        starts.append(position)
        cursor = position + max(1, len(part.strip()))
    starts[0] = 0 if not text[: starts[0]].strip() else starts[0]
    bounds = starts + [len(text)]
    return [_section(doc_id, text, i + 1, bounds[i], bounds[i + 1], f"Section {i + 1}", "section")
            for i in range(len(starts))]


def chapters(doc_id: str, text: str) -> list[dict[str, Any]] | None:
    """Sections at chapter-like headings preceded by a blank line; None when fewer than two."""
    marks, previous_blank = [], True
    for offset, line in _lines(text):
        if previous_blank and line.strip() and CHAPTER.match(line):
            marks.append((offset, line.strip().lstrip("#").strip()))
        previous_blank = not line.strip()
    if len(marks) < 2:
        return None
    rows = []
    if text[: marks[0][0]].strip():
        rows.append(_section(doc_id, text, 0, 0, marks[0][0], "Preamble", "preamble"))
    bounds = [m[0] for m in marks] + [len(text)]
    for i, (offset, title) in enumerate(marks):
        rows.append(_section(doc_id, text, i + 1, offset, bounds[i + 1], title, "chapter"))
    return rows


def paragraph_groups(doc_id: str, text: str, target_tokens: int) -> list[dict[str, Any]]:
    """Consecutive paragraphs grouped up to about `target_tokens` each."""
    paragraphs = [(m.start(), m.end()) for m in re.finditer(r"\S(?:.*\S)?(?:\n(?![ \t]*\n).*)*", text)]
    rows, group_start, group_tokens, ordinal = [], None, 0, 0
    for index, (start, end) in enumerate(paragraphs):
        if group_start is None:
            group_start = start
        group_tokens += count_tokens(text[start:end])
        is_last = index == len(paragraphs) - 1
        if group_tokens >= target_tokens or is_last:
            ordinal += 1
            group_end = end if is_last else paragraphs[index + 1][0]
            first_words = " ".join(text[group_start:group_end].split()[:6])
            rows.append(_section(doc_id, text, ordinal, group_start, group_end, f"Part {ordinal}: {first_words}…", "paragraphs"))
            group_start, group_tokens = None, 0
    return rows


def segment(doc_id: str, text: str, language: str, kind: str, *, section_texts: list[str] | None = None,
            paragraph_group_tokens: int = 900) -> tuple[list[dict[str, Any]], list[str]]:
    """(section rows, warnings) for one document."""
    warnings: list[str] = []
    if section_texts:
        rows = given_sections(doc_id, text, section_texts)
        if rows:
            return rows, warnings
        warnings.append("the input's section texts could not be located in the text; segmented automatically")
    if kind == "screenplay":
        headings = find_headings(text, language)
        if headings:
            return scenes(doc_id, text, headings), warnings
        warnings.append("no scene headings found; segmented into paragraph groups")
    rows = chapters(doc_id, text) or paragraph_groups(doc_id, text, paragraph_group_tokens)
    return rows, warnings


def run(ctx: StageContext) -> StageOutput:
    document = ctx.document
    meta = json.loads(ctx.table("documents").iloc[0]["meta_json"] or "{}")
    section_texts = meta.get("section_texts") if isinstance(meta.get("section_texts"), list) else None
    rows, warnings = segment(document.doc_id, document.text, document.language, document.kind,
                             section_texts=section_texts,
                             paragraph_group_tokens=ctx.settings.segment_sections.paragraph_group_tokens)
    return {"sections": rows, "_warnings": warnings}
