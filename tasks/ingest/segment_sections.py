"""Split a document into sections: scenes for screenplays; chapters, given sections or
paragraph groups for prose. Scene headings are parsed into interior/exterior, location and
time of day.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Iterator

from schemas.ids import make_id
from tasks.ingest.scene_detect import detect
from tasks.ingest.scene_headings import read_shape, speech_lines, split_en_slug
from tasks.stage import StageContext, StageOutput
from tasks.text import count_tokens, normalize_text

# Fountain's forced heading: a line starting with one period then a letter or digit.
FOUNTAIN_FORCED = re.compile(r"^\.(?=[A-Za-z0-9\u4e00-\u9fff])(?P<slug>.+?)\s*$")
CHAPTER = re.compile(
    r"^[ \t]*(?:#{1,3}[ \t]+\S.*"
    r"|(?:CHAPTER|Chapter|PART|Part|BOOK|Book)[ \t]+(?:[IVXLCDM]+|\d+|[A-Za-z]+)\b.{0,60}"
    r"|[IVXLCDM]{1,7}\.?|\d{1,3}\.|第[一二三四五六七八九十百千0-9]+[章回节].{0,30})[ \t]*$"
)

FALLBACK = "fell back to paragraph groups"
SCRIPT_SPEECH_LINES = 20  # lines of speech that make a text without scene headings read like a script


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


def parse_heading(line: str, language: str, opens_block: bool = False) -> Heading | None:
    """The scene heading in `line` judged by its shape alone, or None. `line_start` is filled by the
    caller. Shapes that are headings only at the start of a block ("FLASHBACK - INT. …") count
    when `opens_block`; the numbering of neighbouring headings is `find_headings`' business."""
    stripped = line.strip()
    shape = read_shape(line, language)
    if shape is not None and (
        shape.strength in ("explicit", "numbered", "standalone")
        or (opens_block and shape.strength == "opens_block")
    ):
        return Heading(0, stripped, shape.number, shape.interior, shape.location, shape.time_of_day)
    match = FOUNTAIN_FORCED.match(stripped)
    if match and not stripped.startswith("..") and len(stripped) <= 120:
        interior, location, time_of_day = split_en_slug(match.group("slug"), None)
        # The period is Fountain's mark, not part of the heading the writer wrote.
        return Heading(0, match.group("slug"), None, interior, location, time_of_day)
    return None


def find_headings(text: str, language: str) -> list[Heading]:
    """Scene headings decided by each line's shape and its context (see tasks/ingest/scene_headings)."""
    return detect_headings(text, language)[0]


def detect_headings(text: str, language: str) -> tuple[list[Heading], list[str]]:
    """(headings, notes on heading-like lines that were not taken)."""
    detection = detect(text, language)
    headings = {
        d.line_start: Heading(
            d.line_start,
            d.shape.text,
            d.shape.number,
            d.shape.interior,
            d.shape.location,
            d.shape.time_of_day,
        )
        for d in detection.headings
    }
    previous_blank = True
    for offset, line in _lines(text):  # Fountain's forced headings (".SNOWY FIELD")
        # Only at the start of a block, as Fountain asks: inside a scene a leading period is a wrapped
        # line of dialogue (".200?", ".45 under his seat") or a cue cut by the page (".BRUCE").
        if (
            previous_blank
            and offset not in headings
            and line.startswith(".")
            and (heading := parse_heading(line, language))
        ):
            headings[offset] = Heading(offset, *list(heading.__dict__.values())[1:])
        previous_blank = not line.strip()
    return [headings[k] for k in sorted(headings)], detection.notes


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


def _section(
    doc_id: str,
    text: str,
    ordinal: int,
    start: int,
    end: int,
    heading: str,
    kind: str,
    number: str | None = None,
    interior: str | None = None,
    location: str | None = None,
    time_of_day: str | None = None,
) -> dict[str, Any]:
    start, end = _trim_span(text, start, end)
    return {
        "section_id": make_id("sec", doc_id, ordinal, start, end),
        "doc_id": doc_id,
        "ordinal": ordinal,
        "heading": heading,
        "section_kind": kind,
        "scene_number": number,
        "interior": interior,
        "location": location,
        "time_of_day": time_of_day,
        "char_start": start,
        "char_end": end,
        "text": text[start:end],
    }


def scenes(doc_id: str, text: str, headings: list[Heading]) -> list[dict[str, Any]]:
    """One section per scene heading; text before the first heading becomes a preamble (ordinal 0)."""
    rows = []
    if headings and text[: headings[0].line_start].strip():
        rows.append(_section(doc_id, text, 0, 0, headings[0].line_start, "Preamble", "preamble"))
    bounds = [h.line_start for h in headings] + [len(text)]
    for ordinal, heading in enumerate(headings, start=1):
        rows.append(
            _section(
                doc_id,
                text,
                ordinal,
                heading.line_start,
                bounds[ordinal],
                heading.text,
                "scene",
                heading.number,
                heading.interior,
                heading.location,
                heading.time_of_day,
            )
        )
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
    return [
        _section(doc_id, text, i + 1, bounds[i], bounds[i + 1], f"Section {i + 1}", "section")
        for i in range(len(starts))
    ]


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
            rows.append(
                _section(
                    doc_id,
                    text,
                    ordinal,
                    group_start,
                    group_end,
                    f"Part {ordinal}: {first_words}…",
                    "paragraphs",
                )
            )
            group_start, group_tokens = None, 0
    return rows


def segment(
    doc_id: str,
    text: str,
    language: str,
    kind: str,
    *,
    section_texts: list[str] | None = None,
    paragraph_group_tokens: int = 900,
) -> tuple[list[dict[str, Any]], list[str]]:
    """(section rows, warnings) for one document."""
    warnings: list[str] = []
    if section_texts:
        rows = given_sections(doc_id, text, section_texts)
        if rows:
            return rows, warnings
        warnings.append("the input's section texts could not be located in the text; segmented automatically")
    if kind == "screenplay":
        headings, notes = detect_headings(text, language)
        warnings.extend(notes)
        if headings:
            return scenes(doc_id, text, headings), warnings
        warnings.append(f"{FALLBACK}: no scene headings recognised")
    rows = chapters(doc_id, text)
    if rows:
        return rows, warnings
    if kind != "screenplay" and (speeches := speech_lines(text, language)) >= SCRIPT_SPEECH_LINES:
        warnings.append(
            f"{FALLBACK}: reads like a screenplay ({speeches} lines of speech) "
            "but no scene headings recognised"
        )
    return paragraph_groups(doc_id, text, paragraph_group_tokens), warnings


def run(ctx: StageContext) -> StageOutput:
    document = ctx.document
    meta = json.loads(ctx.table("documents").iloc[0]["meta"] or "{}")
    section_texts = meta.get("section_texts") if isinstance(meta.get("section_texts"), list) else None
    rows, warnings = segment(
        document.doc_id,
        document.text,
        document.language,
        document.kind,
        section_texts=section_texts,
        paragraph_group_tokens=ctx.settings.segment_sections.paragraph_group_tokens,
    )
    return {"sections": rows, "_warnings": warnings}
