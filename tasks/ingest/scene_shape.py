"""The shape of a scene heading, shared by the English and Chinese line readers and the detector:
the `Shape` a line is read into, the blanks and numerals a heading's number is written with."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tasks.text import zh_number

BLANKS = " \t\u00a0\u3000"
ZH_NUM = "[零〇一二两三四五六七八九十百千]+"
# Leading numbers: "12、", "7.", "88..", "3 ", "（3）", "三、", "12A."
NUMBER_PREFIX = re.compile(
    rf"^(?:[（(](?P<p>\d+[A-Za-z]?)[)）]|(?P<a>\d+[A-Za-z]?)(?:[{BLANKS}]*[、.．,，)）:]+|[{BLANKS}]+)"
    rf"|(?P<z>{ZH_NUM})[{BLANKS}]*[、.．])[{BLANKS}]*"
)


@dataclass(frozen=True)
class Shape:
    text: str
    number: str | None
    value: int | None  # the number's value, for checking the sequence
    interior: str | None
    location: str | None
    time_of_day: str | None
    # explicit | opens_block (after a blank line) | standalone (text must follow) | numbered | follow
    # ("follow": a place/time line that completes a bare "第N场" above it)
    strength: str
    needs_text_after: bool = False
    markers: list[str] = field(default_factory=list)


def number_value(number: str | None) -> int | None:
    """The value of a scene number ("12", "12A", "十二"), or None."""
    if not number:
        return None
    digits = re.match(r"\d+", number)
    return int(digits.group()) if digits else zh_number(number)
