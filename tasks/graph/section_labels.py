"""Names that label the text's own structure, not something in the story: a scene heading
("12 INT. FERRY - NIGHT"), a section's heading as printed, a numbered label ("Scene 3", "第3场"),
the preamble. A small model reading a packed request copies them out as entities (typed as
concepts or locations); they are dropped before grounding, and counted.
"""

from __future__ import annotations

import re
from typing import Iterable

from tasks.graph.names import normalize_name
from tasks.ingest.scene_headings import read_shape

STRUCTURE_WORDS = (
    "scene", "section", "chapter", "part", "act", "sequence", "preamble", "prologue", "epilogue",
    "title page", "cont'd", "continued",
)  # fmt: skip
EN_LABEL = re.compile(
    r"^(?:" + "|".join(re.escape(w) for w in STRUCTURE_WORDS) + r")(?:[\s.:#-]*[\w.]{0,6})?$", re.IGNORECASE
)
ZH_LABEL = re.compile(r"^(?:第\s*[\d一二三四五六七八九十百零〇两]+\s*[场幕章节集回部]|序幕|序章|尾声|楔子)$")
NUMBER_ONLY = re.compile(r"^[\d\s.:#-]+$")


def label_keys(headings: Iterable[str]) -> set[str]:
    """Normalized section headings of a document, with and without a leading scene number."""
    keys: set[str] = set()
    for heading in headings:
        key = normalize_name(str(heading or ""))
        if key:
            keys.add(key)
            keys.add(re.sub(r"^\d+[a-z]?\s+", "", key))
    return keys


def is_section_label(name: str, headings: set[str], language: str) -> bool:
    """Whether an extracted entity name is a label of the text's structure (see module doc)."""
    text = name.strip()
    key = normalize_name(text)
    if not key or NUMBER_ONLY.match(text):
        return True
    if key in headings:
        return True
    if EN_LABEL.match(text) or (language == "zh" and ZH_LABEL.match(text)):
        return True
    # A heading rewritten in title case ("5 Ext. Ferry Deck - Later") is still a heading.
    # Only with a heading's punctuation: a group called "Int Ops" is not "INT OPS".
    recased = language != "zh" and ("." in text or " - " in text)
    variants = (text, text.upper()) if recased else (text,)
    shapes = (read_shape(variant, language) for variant in variants)
    return any(shape is not None and shape.strength == "explicit" for shape in shapes)
