"""Text for people made safe to print: data never reaches a terminal as a control sequence.

A document, a question, a model's reply or a file name can hold ESC, BEL or the one-byte CSI
(U+009B); printed raw, `ESC ] 0 ; ... BEL` sets the window title and `ESC [ 2 J` clears the
screen. Every line NKW prints for people (tables, answers, listings, errors) goes through
`safe_text`; machine formats (CSV, JSON) keep the bytes as they are.
"""

from __future__ import annotations

import re
import sys
from typing import Any, TextIO

# C0 controls except tab and line feed, DEL, and the C1 controls (U+0080-U+009F).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def safe_text(text: Any, one_line: bool = False) -> str:
    """`text` with every control character shown as `\\xNN` (line feeds too with `one_line`)."""
    text = str(text)
    if one_line:
        text = text.replace("\n", "\\x0a").replace("\t", " ")
    return _CONTROL.sub(_visible, text)


def say(*parts: Any, file: TextIO | None = None, flush: bool = False) -> None:
    """`print` for text meant for people: the same line, with control characters made visible."""
    print(safe_text(" ".join(str(part) for part in parts)), file=file or sys.stdout, flush=flush)
