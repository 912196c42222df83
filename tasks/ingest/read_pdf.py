"""PDF with a text layer read into plain text (pypdf): each piece of text placed by its position,
pieces at one height made one line, then the page furniture taken out (see `pdf_pages`).

A PDF without text (a scan) is refused in one line: reading it needs OCR first.
"""

from __future__ import annotations

import io
import logging
from typing import Any

from tasks.ingest.pdf_pages import Line, PageLines, Run, pages_text
from tasks.ingest.read_input import InputRefused

PDF_MAGIC = b"%PDF-"
SCANNED = (
    "scanned PDF: its pages are images with no text layer; run OCR on it first "
    "(e.g. ocrmypdf) and build the result"
)
NO_TEXT = "PDF with no text layer (no text on any page)"
SAME_LINE = 2.0  # points: pieces whose baselines differ by less are one line


def is_pdf(data: bytes) -> bool:
    """True when the bytes are a PDF, whatever the file is called (a PDF named .txt is still one)."""
    return data[:1024].lstrip(b"\x00\t\n\r ").startswith(PDF_MAGIC)


def pdf_text(data: bytes, max_chars: int) -> str:
    """The plain text of a PDF's text layer; InputRefused for scans, encrypted or broken files."""
    from pypdf import PdfReader  # imported here: only a build that meets a PDF pays for it

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its warnings on odd files are not ours to print
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise InputRefused("encrypted PDF (a password is needed to read it); not read")
        pages, images, chars = [], 0, 0
        for page in reader.pages:
            lines = _page_lines(page)
            chars += sum(len(run.text) for line in lines.lines for run in line.runs)
            if chars > max_chars:
                raise InputRefused(
                    f"document too large: more than {max_chars:,} characters (build.max_document_chars)"
                )
            images += 0 if lines.lines else _has_images(page)
            pages.append(lines)
    except InputRefused:
        raise
    except Exception as exc:  # noqa: BLE001 - a malformed PDF can fail anywhere inside the parser
        raise InputRefused(f"unreadable PDF: {_one_line(exc)}") from None
    if not any(page.lines for page in pages):
        raise InputRefused(SCANNED if images else NO_TEXT)
    return pages_text(pages)


def _one_line(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


def _page_lines(page: Any) -> PageLines:
    """The page's text as lines of positioned runs, top to bottom."""
    runs: list[Run] = []

    def visit(text: str, cm: list[float], tm: list[float], _font: Any, size: float) -> None:
        if not text:
            return
        x = tm[4] * cm[0] + tm[5] * cm[2] + cm[4]
        y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
        scale = abs(tm[3] * cm[3]) or abs(tm[0] * cm[0]) or 1.0
        height = (size or 12.0) * scale
        # pypdf may hand over several lines at once; the later ones go below the first.
        for index, part in enumerate(text.split("\n")):
            if part.strip():
                runs.append(Run(x, y - index * height * 1.2, part, height))

    page.extract_text(visitor_text=visit)
    box = page.mediabox
    return PageLines(_lines(runs), float(box.width), float(box.height))


def _lines(runs: list[Run]) -> list[Line]:
    lines: list[Line] = []
    for run in sorted(runs, key=lambda r: (-r.y, r.x)):
        if lines and abs(lines[-1].y - run.y) < SAME_LINE:
            lines[-1].runs.append(run)
        else:
            lines.append(Line(run.y, [run]))
    for line in lines:
        line.runs.sort(key=lambda r: r.x)
    return lines


def _has_images(page: Any) -> int:
    """1 when the page draws an image (a scan), else 0; read from its resources, no image decoded."""
    try:
        objects = page.get("/Resources", {}).get("/XObject", {})
        return int(any(obj.get_object().get("/Subtype") == "/Image" for obj in objects.values()))
    except Exception:  # noqa: BLE001 - odd resources only mean "no image found"
        return 0
