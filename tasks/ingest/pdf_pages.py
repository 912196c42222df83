"""Page furniture taken out of a PDF's positioned lines, and the pages joined into one text.

What a printed screenplay adds to its text, and what becomes of it here:
- page numbers ("12.", "Page 3", "- 3 -") and headers or footers repeated on most pages: removed;
- "(CONTINUED)" and "CONTINUED:" at page breaks: removed;
- scene numbers printed in both margins of a heading ("12.  INT. HOUSE - DAY  12."): taken out of
  the margins onto the heading line as a text screenplay has them ("12 INT. HOUSE - DAY 12"), so the
  scene keeps its number; revision asterisks in the right margin: removed;
- "(MORE)" at the foot of a page and the cue repeated on the next ("MARGARET (CONT'D)"): removed,
  so a speech split by the page is one speech again.
A vertical gap larger than the usual line spacing is a blank line (a new paragraph).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from statistics import median

from tasks.ingest.screenplay import cue_name

MARGIN_NUMBER = re.compile(r"^\(?(?P<n>\d{1,4}[A-Z]{0,3})\.?\)?$")
PAGE_NUMBER = re.compile(
    r"^(?:page\s+)?[-–—]?\s*\d{1,4}\s*[-–—]?\.?(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE
)
PAGINATION = re.compile(r"^(?:\(CONTINUED\)|CONTINUED:?(?:\s*\(\d+\))?|\(CONT'D\)|\(CONT’D\))$")
MORE = "(MORE)"
CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]")
EDGE_LINES = 2  # how many lines at the top and at the foot of a page can be furniture
BLANK_GAP = 1.5  # a gap this many usual line spacings wide is a blank line


@dataclass
class Run:
    """A piece of text drawn at one position (x, y in points from the page's lower left)."""

    x: float
    y: float
    text: str
    size: float


@dataclass
class Line:
    y: float
    runs: list[Run] = field(default_factory=list)
    text: str = ""


@dataclass
class PageLines:
    lines: list[Line]
    width: float
    height: float


def pages_text(pages: list[PageLines]) -> str:
    """The text of every page, furniture removed, pages joined (split speeches rejoined)."""
    body_left = _body_left(pages)
    for page in pages:
        page.lines = [line for line in (_place(line, body_left, page.width) for line in page.lines) if line]
    _drop_headers_and_footers(pages)
    spacing = _line_spacing(pages)
    out: list[str] = []
    broken = False  # the last page ended inside a speech ("(MORE)")
    speaker: str | None = None  # whose speech it was, when its cue can be found
    for page in pages:
        lines = [line for line in page.lines if not PAGINATION.match(line.text)]
        more = bool(lines) and lines[-1].text == MORE
        lines = [line for line in lines if line.text != MORE]
        joined = False
        cue = cue_name(lines[0].text) if broken and lines else None
        if cue and (cue[0] == speaker or "CONT" in (cue[1] or "").upper()):
            lines, joined = lines[1:], True
        for index, line in enumerate(lines):
            if index == 0:
                blank = bool(out) and not joined
            else:
                blank = lines[index - 1].y - line.y > BLANK_GAP * spacing
            if blank and out and out[-1]:
                out.append("")
            out.append(line.text)
        broken, speaker = more, _open_speaker(out) if more else None
    return "\n".join(out).strip("\n") + "\n"


def _width(text: str, size: float) -> float:
    """Roughly how wide `text` is drawn: screenplays are set in Courier (0.6 em), CJK is 1 em."""
    return sum(1.0 if CJK.match(c) else 0.6 for c in text) * size


def _join(runs: list[Run]) -> str:
    text = ""
    for previous, run in zip([None, *runs], runs):
        if previous is not None:
            gap = run.x - (previous.x + _width(previous.text, previous.size))
            if gap > 0.3 * run.size and not text.endswith(" ") and not run.text.startswith(" "):
                text += " "
        text += run.text
    return " ".join(text.split()) if not CJK.search(text) else text.strip()


def _body_left(pages: list[PageLines]) -> float:
    """Where most lines start: the left edge of the text body (action lines)."""
    starts = Counter(
        round(line.runs[0].x)
        for page in pages
        for line in page.lines
        if line.runs and not MARGIN_NUMBER.match(line.runs[0].text.strip())
    )
    return float(starts.most_common(1)[0][0]) if starts else 0.0


def _place(line: Line, body_left: float, width: float) -> Line | None:
    """The line's text, with scene numbers out of the margins and revision marks gone."""
    runs = list(line.runs)
    left = right = None
    if len(runs) > 1 and runs[-1].text.strip() == "*" and runs[-1].x > 0.7 * width:
        runs.pop()  # a revision mark
    if len(runs) > 1 and (m := MARGIN_NUMBER.match(runs[0].text.strip())) and runs[0].x < body_left - 1:
        left = m.group("n")
        runs.pop(0)
    last = runs[-1] if len(runs) > 1 else None
    if last and (m := MARGIN_NUMBER.match(last.text.strip())) and last.x > 0.7 * width:
        before = runs[-2]
        if last.x - (before.x + _width(before.text, before.size)) > 2 * last.size:
            right = m.group("n")
            runs.pop()
    body = _join(runs)
    if not body:
        return None
    if not PAGINATION.match(body):  # "12 CONTINUED: 12" at the top of a page is furniture as a whole
        body = " ".join(part for part in (left, body, right) if part)
    return Line(line.y, runs, body)


def _masked(text: str) -> str:
    return re.sub(r"\d+", "#", text.lower())


def _drop_headers_and_footers(pages: list[PageLines]) -> None:
    """Page numbers at a page's edges, and edge lines repeated (numbers aside) on most pages."""
    edges = [page.lines[:EDGE_LINES] + page.lines[-EDGE_LINES:] for page in pages]
    counts = Counter(key for lines in edges for key in {_masked(line.text) for line in lines})
    repeated = {key for key, n in counts.items() if n >= max(3, 0.6 * len(pages))}
    for page in pages:
        top, foot = page.lines[:EDGE_LINES], page.lines[-EDGE_LINES:]
        drop = {
            id(line)
            for line in top + foot
            if PAGE_NUMBER.match(line.text) or (_masked(line.text) in repeated and line.text != MORE)
        }
        page.lines = [line for line in page.lines if id(line) not in drop]


def _line_spacing(pages: list[PageLines]) -> float:
    gaps = [
        round(a.y - b.y, 1) for page in pages for a, b in zip(page.lines, page.lines[1:]) if a.y - b.y > 0.5
    ]
    if not gaps:
        return 12.0
    return Counter(gaps).most_common(1)[0][0] or median(gaps)


def _open_speaker(out: list[str]) -> str | None:
    """The speaker of the speech that ends `out`: the last cue of the last block (scripts often
    put no blank line between action and a cue)."""
    for line in reversed(out):
        if not line:
            return None
        if cue := cue_name(line):
            return cue[0]
    return None
