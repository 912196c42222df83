"""Which reader a file needs, decided by its bytes first (a PDF is a PDF whatever its name) and then
by its name: PDF, Final Draft (.fdx), Fountain, or text in one of the encodings `decode_bytes` knows."""

from __future__ import annotations

from pathlib import Path

from tasks.ingest.ingest_documents import decode_bytes
from tasks.ingest.read_fdx import fdx_text
from tasks.ingest.read_fountain import fountain_text
from tasks.ingest.read_input import InputRefused
from tasks.ingest.read_pdf import is_pdf, pdf_text

# Readers that give text with no encoding of their own to report (no "not UTF-8" notice for them).
DECODED = ("utf-8", "pdf", "xml")


def file_text(path: Path, data: bytes, max_chars: int) -> tuple[str, str, str | None]:
    """(text, encoding, kind) of one input file; kind is "screenplay" when the format says so.

    InputRefused, with the reason, when the file holds no text this build can read."""
    suffix = path.suffix.lower()
    if is_pdf(data):
        return pdf_text(data, max_chars), "pdf", None
    if suffix == ".pdf":
        raise InputRefused("named .pdf but not a PDF (no %PDF- header); not read")
    if suffix == ".fdx":
        return fdx_text(data), "xml", "screenplay"
    text, encoding, problem = decode_bytes(data)
    if text is None:
        raise InputRefused(problem or "undecodable")
    if suffix == ".fountain":
        return fountain_text(text), encoding, "screenplay"
    return text, encoding, None
