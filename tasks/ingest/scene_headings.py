"""Scene headings decided by a line's shape and its context.

A line is read into a `Shape`: an optional scene number (Arabic or Chinese numerals, "第N场",
"12、", "7.", "3 "), the place, interior/exterior (INT/EXT, 内/外) and the time (DAY/NIGHT,
日/夜/清晨…, with a season run into it). How much the shape alone says decides its `strength`:

- "explicit": a heading on its own (an INT./EXT. slugline at the start of the line, "第12场",
  a numbered line carrying 内/外 or 日/夜 markers);
- "block": a heading when it opens a block (after a blank line or at the start): sluglines
  with a qualifier ("INTERCUT - INT. …", "FLASHBACK - EXT. …"), montage items ("-- INT. …"),
  unnumbered "PLACE - NIGHT" lines, unnumbered "火车站台，夜，外" lines followed by text;
- "numbered": a numbered short line with no markers ("97.画面组合", "12、THE BEACH") that is a
  heading only when its number fits the numbering of the headings around it.

`read_shape` is the line alone (English here, Chinese in `scene_headings_zh`); `scene_detect.detect`
applies the context.
"""

from __future__ import annotations

import re
from functools import lru_cache

from tasks.ingest.scene_headings_zh import read_zh
from tasks.ingest.scene_shape import BLANKS, NUMBER_PREFIX, Shape, number_value
from tasks.text import zh_number

# Other modules read Chinese numerals and scene numbers through this one.
__all__ = ["Shape", "number_value", "read_en", "read_shape", "speech_lines", "split_en_slug", "zh_number"]

EN_SLUG = re.compile(r"(?P<ie>INT\.?[ ]?/[ ]?EXT|EXT\.?[ ]?/[ ]?INT|I/E|INT|EXT|EST)(?:\.|[ \t]|$)")
BULLET = re.compile(r"^(?:-{1,2}|[—–•*]|[A-Z0-9]{1,2}\))[ \t]+")
QUALIFIER = re.compile(r"^(?P<q>[A-Z][A-Z' ]{1,30}?)[ \t]*(?:-{1,2}|–|—|:)[ \t]*(?=(?:INT|EXT|I/E|EST)\b)")
INTERCUT = re.compile(r"^INTERCUT(?:[ \t]*(?:-{1,2}|–|—|:)[ \t]*|[ \t]+(?:BETWEEN[ \t]+)?)(?P<rest>.+)$")
NON_TIMES = frozenset({"CONTINUOUS", "LATER", "MOMENTS LATER", "SAME TIME"})
EN_TIMES = (
    "MOMENTS LATER",
    "SAME TIME",
    "MAGIC HOUR",
    "CONTINUOUS",
    "AFTERNOON",
    "MIDNIGHT",
    "MORNING",
    "EVENING",
    "SUNRISE",
    "SUNSET",
    "NIGHT",
    "LATER",
    "DAWN",
    "DUSK",
    "NOON",
    "DAY",
)
_EN_TIME_TAIL = re.compile(
    r"(?:[ \t]*(?:-{1,2}|–|—|,|/)?[ \t]*\(?(?P<t>" + "|".join(EN_TIMES) + r")\)?\.?)[ \t]*$"
)
_TRAILING_NUMBER = re.compile(r"[ \t]+\(?(?P<n>[A-Z]?\d+[A-Z]?)\)?(?:[ \t]*\*)?[ \t]*$|[ \t]*\*+[ \t]*$")


_ZH_SPEECH = re.compile(r"^[^\s：:，。！？“”\"（(]{1,12}[：:]\S")
_EN_CUE = re.compile(r"^[ \t]*[A-Z][A-Z .'’\-]{1,30}(?:\([^)]{1,12}\))?[ \t]*$")


def speech_lines(text: str, language: str) -> int:
    """How many lines read as a character's speech ("林舟：…", or an English cue above a line)."""
    lines = text.split("\n")
    if language == "zh":
        return sum(1 for line in lines if _ZH_SPEECH.match(line.strip(BLANKS)))
    return sum(
        1
        for line, after in zip(lines, lines[1:])
        if _EN_CUE.match(line) and after.strip() and not after.strip().isupper()
    )


# --- English ------------------------------------------------------------------------------


def _mostly_upper(slug: str) -> bool:
    letters = [c for c in slug if c.isalpha() and c.isascii()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def split_en_slug(slug: str, ie: str | None) -> tuple[str | None, str | None, str | None]:
    """(interior, location, time) of an English slugline's text after any number."""
    slug = slug.strip().rstrip(".").strip()
    interior = None
    if ie:
        compact = ie.replace(" ", "").replace(".", "").upper()
        interior = {"INT": "INT", "EXT": "EXT", "EST": "EXT"}.get(compact, "INT/EXT")
        slug = slug[len(ie) :].lstrip(". ").strip()
    times = []
    while (match := _EN_TIME_TAIL.search(slug)) and match.start() > 0:
        times.insert(0, match.group("t"))
        slug = slug[: match.start()].rstrip(" -–—.,(")
    # "NIGHT - CONTINUOUS": the time of day is the first word; a lone "CONTINUOUS" stays as written.
    time_of_day = times[0] if times else None
    location = slug.strip(" -–—") or None
    return interior, location, time_of_day


def _strip_trailing_number(slug: str, number: str | None) -> tuple[str, str | None]:
    match = _TRAILING_NUMBER.search(slug)
    if not match or match.start() == 0:
        return slug, number
    trailing = match.group("n")
    if trailing and number and trailing != number:
        return slug, number
    return slug[: match.start()], number or trailing


def _separated_time(location: str | None, body: str, time_of_day: str | None) -> bool:
    """True when the time stands after a dash ("THE BEACH - NIGHT"), not inside a phrase ("THE NEXT DAY")."""
    dash_time = rf"[ \t](?:-{{1,2}}|–|—)[ \t]*\(?{time_of_day}\b"
    return bool(location and time_of_day and re.search(dash_time, body))


_BOOKENDED = re.compile(r"^(?P<n>\d{1,4}[A-Z]?)(?:[ \t]+(?P<body>\S.*?))?[ \t]+(?P=n)$")
_CONTINUED = re.compile(r"^\(?(?:CONTINUED|CONT'D)\b")


def _bookended(stripped: str) -> Shape | None:
    """A heading with the scene number in both margins, as shooting scripts print it ("4 THE VILLAGE
    OF NALIBOKI 4", "106 106"); "6A CONTINUED: 6A" is the top of a page, not a scene."""
    match = _BOOKENDED.match(stripped)
    body = (match.group("body") or "") if match else ""
    if not match or _CONTINUED.match(body) or (body and not _mostly_upper(body)):
        return None
    number = match.group("n")
    interior, location, time_of_day = (None, None, None)
    if body:
        slug = EN_SLUG.match(body)
        interior, location, time_of_day = split_en_slug(body, slug.group("ie") if slug else None)
    return Shape(stripped, number, number_value(number), interior, location, time_of_day, "explicit")


def read_en(line: str) -> Shape | None:
    stripped = line.strip(BLANKS)
    if not stripped or len(stripped) > 120 or stripped.startswith(". ") or stripped.endswith(":"):
        return None
    if bookend := _bookended(stripped):
        return bookend
    rest, strength = stripped, "explicit"
    if (bullet := BULLET.match(rest)) and EN_SLUG.match(rest[bullet.end() :]):
        rest, strength = rest[bullet.end() :], "opens_block"  # a slugline inside a montage
    number = None
    prefix = NUMBER_PREFIX.match(rest)
    if prefix and (prefix.group("a") or prefix.group("p")):
        number, rest = prefix.group("a") or prefix.group("p"), rest[prefix.end() :]
    if not EN_SLUG.match(rest) and (qualifier := QUALIFIER.match(rest)):
        rest, strength = rest[qualifier.end() :], "opens_block"  # "FLASHBACK - INT. …", "INTERCUT - INT. …"
    elif (intercut := INTERCUT.match(rest)) and _mostly_upper(rest):
        body, number = _strip_trailing_number(intercut.group("rest"), number)
        ie = EN_SLUG.match(body)
        interior, location, time_of_day = split_en_slug(body, ie.group("ie") if ie else None)
        return Shape(stripped, number, number_value(number), interior, location, time_of_day, "opens_block")
    slug = EN_SLUG.match(rest)
    if slug and _mostly_upper(rest):
        body, number = _strip_trailing_number(rest, number)
        interior, location, time_of_day = split_en_slug(body, slug.group("ie"))
        return Shape(stripped, number, number_value(number), interior, location, time_of_day, strength)
    if not _mostly_upper(rest) or len(rest) > 60 or rest.endswith(("!", "?")):
        return None
    body, number = _strip_trailing_number(rest, number) if number else (rest, None)
    _, location, time_of_day = split_en_slug(body, None)
    if not location or not re.search(r"[A-Z]{2}", location):
        return None
    if number is not None:  # "87、BLACK SCREEN": a heading if the numbering around it agrees
        return Shape(stripped, number, number_value(number), None, location, time_of_day, "numbered")
    if _separated_time(location, body, time_of_day) and time_of_day not in NON_TIMES:
        return Shape(stripped, None, None, None, location, time_of_day, "opens_block", needs_text_after=True)
    return None


@lru_cache(maxsize=1 << 16)  # every stage that parses blocks asks again for the same lines
def read_shape(line: str, language: str) -> Shape | None:
    """The heading shape of one line, or None (the line alone, without context). Shapes are shared:
    never change one."""
    shape = read_en(line)
    if language != "zh" or (shape is not None and shape.strength == "explicit"):
        return shape
    return read_zh(line) or shape
