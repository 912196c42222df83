"""Scene headings in context: each line's shape (`scene_headings.read_shape`) accepted or
rejected in the light of the lines around it — block openings, numbering runs, a bare "第N场"
merged with the place/time line under it.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.ingest.scene_headings import BLANKS, Shape, read_shape


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
        fits = value is not None and (p is None or p < value) and (q is None or value < q)
        close = (
            (p is not None and value - p <= 2)
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
        else:
            rejected.append(shapes[i].text)
    notes = []
    if rejected and accepted:
        shown = "; ".join(f"'{t[:40]}'" for t in rejected[:3])
        notes.append(
            f"{len(rejected)} numbered line(s) shaped like scene headings were not taken as scenes "
            f"(their numbers do not fit the headings around them): {shown}"
        )
    return Detection([Detected(offsets[i], accepted[i]) for i in sorted(accepted)], notes)
