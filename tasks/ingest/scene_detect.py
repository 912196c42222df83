"""Scene headings in context: each line's shape (`scene_headings.read_shape`) accepted or
rejected in the light of the lines around it — block openings, numbering runs, a bare "第N场"
merged with the place/time line under it.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace

from tasks.ingest.scene_headings import read_shape
from tasks.ingest.scene_shape import BLANKS, ZH_NUM, Shape, number_value

# A scene number opening a block: "12、", "7.", "40. 15 …", "七、", "二十七、". Its shape may be anything
# after that (a whole line of action run into the heading, a place with digits, a bare number).
RUN_NUMBER = re.compile(
    rf"^[{BLANKS}]*(?:(?P<n>\d{{1,4}}|{ZH_NUM})[{BLANKS}]*(?:、|[.．](?!\d)|[场場])|(?P<r>\d{{1,4}})(?=[\u4e00-\u9fff]))"
)


@dataclass(frozen=True)
class Detected:
    line_start: int
    shape: Shape


@dataclass
class Detection:
    headings: list[Detected]
    notes: list[str]


def _merge(first: Shape, second: Shape) -> Shape:
    """A bare "第N场" and the place/time line under it, as one heading."""
    return Shape(
        f"{first.text} {second.text}",
        first.number,
        first.value,
        second.interior,
        second.location,
        second.time_of_day,
        first.strength,
        False,
        second.markers,
    )


def detect(text: str, language: str) -> Detection:
    """Scene headings of `text`: each line's shape, accepted in the light of the lines around it."""
    offsets, lines, offset = [], text.split("\n"), 0
    for line in lines:
        offsets.append(offset)
        offset += len(line) + 1
    shapes = [read_shape(line, language) for line in lines]
    nonblank = [i for i, line in enumerate(lines) if line.strip(BLANKS)]
    following = {a: b for a, b in zip(nonblank, nonblank[1:])}

    def text_after(i: int) -> bool:
        j = following.get(i)
        return j is not None and (shapes[j] is None or shapes[j].strength == "numbered")

    accepted: dict[int, Shape] = {}
    merged: set[int] = set()
    for i, shape in enumerate(shapes):
        if shape is None or i in merged:
            continue
        j = following.get(i)
        if (
            shape.strength == "explicit"
            and shape.number
            and not shape.location
            and not shape.markers
            and j is not None
            and shapes[j] is not None
            and shapes[j].strength in ("follow", "standalone")
        ):
            accepted[i] = _merge(shape, shapes[j])
            merged.add(j)
        elif shape.strength == "explicit":
            accepted[i] = shape
        elif shape.strength == "opens_block" and (i == 0 or not lines[i - 1].strip(BLANKS)):
            if not shape.needs_text_after or text_after(i):
                accepted[i] = shape
        elif shape.strength == "standalone" and text_after(i):
            accepted[i] = shape
    rejected = []
    weak = [i for i, shape in enumerate(shapes) if shape is not None and shape.strength == "numbered"]
    for position, i in enumerate(weak):
        value = shapes[i].value
        before = [accepted[k].value for k in sorted(accepted) if k < i and accepted[k].value is not None]
        after = [accepted[k].value for k in sorted(accepted) if k > i and accepted[k].value is not None]
        p, q = (before[-1] if before else None), (after[0] if after else None)
        neighbours = [shapes[k].value for k in weak[max(0, position - 1) : position + 2] if k != i]
        # A number equal to a neighbour's is taken at a block opening: releases repeat numbers
        # ("24、武馆，夜，内" then "24、画面组合") and number sub-scenes ("93.…" before "93a.…").
        opens = i == 0 or not lines[i - 1].strip(BLANKS)
        # A script in parts numbers each part from 1 again ("1外景  城镇边缘  日" after scene 8)
        later = [shapes[k].value for k in weak[position + 1 : position + 2]]
        restarts = value == 1 and later == [2]
        fits = (
            value is not None
            and (p is None or p < value or (opens and p == value) or (opens and restarts))
            and (q is None or value < q or (opens and value == q))
        )
        close = (
            restarts
            or (p is not None and value - p <= 2)
            or (q is not None and q - value <= 2)
            or (
                p is None
                and q is None
                and value is not None
                and any(v is not None and abs(v - value) == 1 for v in neighbours)
            )
        )
        if fits and close and text_after(i):
            accepted[i] = shapes[i]
        elif (split := _split_run_in_number(shapes[i], p, q, language)) and text_after(i):
            accepted[i] = split
        else:
            rejected.append(shapes[i].text)
    for i, shape in _fill_numbering_runs(lines, accepted).items():
        accepted[i] = shape
        rejected = [t for t in rejected if t != shape.text]
    for i in _not_scenes(lines, accepted, language):
        del accepted[i]
    notes = []
    if rejected and accepted:
        shown = "; ".join(f"'{t[:40]}'" for t in rejected[:3])
        notes.append(
            f"{len(rejected)} numbered line(s) shaped like scene headings were not taken as scenes "
            f"(their numbers do not fit the headings around them): {shown}"
        )
    return Detection([Detected(offsets[i], accepted[i]) for i in sorted(accepted)], notes)


def _split_run_in_number(shape: Shape, before: int | None, after: int | None, language: str) -> Shape | None:
    """A scene number run into a place that starts with digits ("12305病房 内 日" between scenes 11 and
    13 is scene 12 at 305病房): the split whose number comes next in the numbering, when the rest
    reads as a marked heading."""
    digits = re.match(r"\d+", shape.text)
    if before is None or not digits or not re.match(r"\d+[^\W\d_]", shape.text):
        return None
    for cut in range(1, len(digits.group())):
        value = int(digits.group()[:cut])
        if before < value <= before + 2 and (after is None or value < after):
            split = read_shape(f"{shape.text[:cut]} {shape.text[cut:]}", language)
            if split is not None and split.strength == "explicit" and split.value == value:
                return replace(split, text=shape.text)
    return None


def _run_candidates(lines: list[str]) -> list[tuple[int, int]]:
    """(line index, number) of lines that open a block with a scene number."""
    found = []
    for i, line in enumerate(lines):
        if (i == 0 or not lines[i - 1].strip(BLANKS)) and (match := RUN_NUMBER.match(line)):
            value = number_value(match.group("n") or match.group("r"))
            if value is not None:
                found.append((i, value))
    return found


def _consecutive(candidates: list[tuple[int, int]], first: int) -> list[tuple[int, int]]:
    """The candidates, in line order, numbered first, first + 1, …; others between them are skipped."""
    run = []
    for i, value in candidates:
        if value == first + len(run):
            run.append((i, value))
    return run


def _fill_numbering_runs(lines: list[str], accepted: dict[int, Shape]) -> dict[int, Shape]:
    """Numbered block openings that complete the numbering of the accepted headings exactly.

    When the headings around them run 37 … 39 and one block between them opens with "38、", that block
    is scene 38 whatever follows the number ("38、 a car drives into town.", "38. 15 屋内，夜，内"). Only
    whole runs are taken: every missing number of a gap, in order, or the run after the last heading
    (or before the first, from 1), so a numbered list inside a scene does not split it."""
    numbered = sorted((i, s.value) for i, s in accepted.items() if s.value is not None)
    if len(numbered) < 2:
        return {}
    candidates = [(i, v) for i, v in _run_candidates(lines) if i not in accepted]
    filled: dict[int, Shape] = {}
    bounds = [(-1, 0)] + numbered + [(len(lines), None)]
    for (start, low), (end, high) in zip(bounds, bounds[1:]):
        # written as the headings around them write their numbers ("38、…" between "37、…" and "39、…")
        style = {_number_style(lines[k]) for k in (start, end) if 0 <= k < len(lines)}
        between = [(i, v) for i, v in candidates if start < i < end and _number_style(lines[i]) in style]
        if not between or low is None:
            continue
        run = _consecutive(between, low + 1)
        if high is not None and (not run or run[-1][1] != high - 1):
            continue  # the gap is not filled exactly: leave it
        for i, value in run:
            text = lines[i].strip(BLANKS)
            filled[i] = Shape(text, str(value), value, None, None, None, "explicit")
    return filled


OMITTED = frozenset({"OMITTED", "OMIT", "OMITTED SCENE", "SCENE OMITTED", "DELETED"})


def _not_scenes(lines: list[str], accepted: dict[int, Shape], language: str) -> list[int]:
    """Accepted headings that do not open a scene of their own:

    - "31 OMITTED 31": a shooting script's placeholder for a cut scene, with no text;
    - a scene number written twice in two styles ("38. 日 外 县衙门口" inside scene 37, then
      "38、日.外.县衙门口" as the script numbers all its scenes): the one in the script's own style opens it;
    - in a Chinese script that numbers its scenes, an unnumbered "小巷，夜，外" inside a scene: a change of
      place within the numbered scene (the script would have numbered a new one), unless it heads the
      revision a note announces ("（改为）").
    """
    order = sorted(accepted)
    styles = {i: _number_style(lines[i]) for i in order if accepted[i].number is not None}
    counts = Counter(styles.values())
    main_style, main_count = counts.most_common(1)[0] if counts else (None, 0)
    in_main_style = {accepted[i].value for i, style in styles.items() if style == main_style}
    numbered = len(styles)
    mostly_numbered = language == "zh" and numbered >= 0.9 * len(order) and len(order) >= 10
    dropped = []
    for i in order:
        shape = accepted[i]
        location = (shape.location or "").strip(" .*").upper()
        if (location in OMITTED or location.startswith("CONTINUED")) and shape.interior is None:
            dropped.append(i)
        elif (
            i in styles
            and styles[i] != main_style
            and main_count >= 0.9 * numbered
            and shape.value in in_main_style
        ):
            dropped.append(i)
        elif (
            mostly_numbered
            and shape.number is None
            and shape.strength in ("standalone", "follow")
            and not re.search(r"\d", shape.text)
            and not _after_revision_note(lines, i)
        ):
            dropped.append(i)
    return dropped


_REVISION_NOTE = re.compile(rf"^[{BLANKS}]*[（(][^()（）]{{1,20}}[)）][{BLANKS}]*$")


def _after_revision_note(lines: list[str], i: int) -> bool:
    """True when a block opens with the line after a note alone on its line ("（改为）", then a blank
    line, then "靳小勇家院门外，下午"): the revised scene's own heading, not a change of place within it."""
    if i < 2 or lines[i - 1].strip(BLANKS):
        return False
    above = next((line for line in reversed(lines[: i - 1]) if line.strip(BLANKS)), "")
    return bool(_REVISION_NOTE.match(above))


def _number_style(line: str) -> str:
    """How a heading writes its number: "、", "." or " " (a bare number, spaced or run in: "62  外景",
    "63开阔地")."""
    match = re.match(rf"[{BLANKS}]*(?:\d+[A-Za-z]?|{ZH_NUM})(?P<sep>[、.．]|[{BLANKS}]|)", line)
    if not match:
        return "?"
    separator = match.group("sep").replace("．", ".")
    return separator if separator in ("、", ".") else " "
