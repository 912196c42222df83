"""Typed screenplay paragraphs (from Fountain or Final Draft) written as the plain screenplay text
that `segment_sections` reads, so a script segments the same whatever format it came in.

A scene heading the plain-text reader would not see by its shape alone is written in Fountain's
forced form (".SNOWY FIELD"), which the segmenter takes as a heading; a cue it would not see
("McCLANE") gets Fountain's "@". Chinese speech is written "林舟：台词", as Chinese scripts are.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.ingest.screenplay import cue_name
from tasks.ingest.segment_sections import find_headings
from tasks.text import CJK_CHAR, detect_language

# Paragraph kinds; anything else is written as action.
KINDS = ("heading", "action", "character", "parenthetical", "dialogue", "transition", "shot")
SPEECH = ("parenthetical", "dialogue")


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of a script: its kind, its text, and a scene number printed in the margins."""

    kind: str
    text: str
    number: str | None = None


def heading_line(paragraph: Paragraph) -> str:
    """A heading as a numbered script prints it: the number at both margins ("12 INT. HOUSE 12")."""
    text = " ".join(line.strip() for line in paragraph.text.strip().split("\n"))  # inner spacing kept
    if paragraph.number and text:
        return f"{paragraph.number} {text} {paragraph.number}"
    return text


def render(paragraphs: list[Paragraph]) -> str:
    """The plain screenplay text of `paragraphs`, one blank line between blocks."""
    language = detect_language("\n".join(p.text for p in paragraphs))
    forced: set[int] = set()
    text, starts = _render(paragraphs, language, forced)
    # Force exactly the headings the segmenter would miss in context (numbering, neighbours).
    found = {h.line_start for h in find_headings(text, language)}
    missed = {i for i, start in starts.items() if start not in found}
    if missed:
        text, _ = _render(paragraphs, language, missed)
    return text


def _render(paragraphs: list[Paragraph], language: str, forced: set[int]) -> tuple[str, dict[int, int]]:
    """(text, offset of each heading's line by paragraph index)."""
    blocks: list[str] = []
    starts: dict[int, int] = {}
    offset = 0
    index = 0
    while index < len(paragraphs):
        paragraph = paragraphs[index]
        if paragraph.kind == "character":
            speech = []
            while index + 1 < len(paragraphs) and paragraphs[index + 1].kind in SPEECH:
                index += 1
                speech.append(paragraphs[index])
            block = _speech(paragraph.text, speech)
        elif paragraph.kind == "heading":
            block = heading_line(paragraph)
            if block and index in forced:
                block = "." + block
            starts[index] = offset
        else:  # action, transition, shot, and speech whose cue was lost
            block = _lines(paragraph.text)
        index += 1
        if not block.strip():
            continue
        blocks.append(block)
        offset += len(block) + 2
    return "\n\n".join(blocks) + "\n", starts


def _lines(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").split("\n"))


def _speech(name: str, speech: list[Paragraph]) -> str:
    name = " ".join(name.split())
    lines = [_lines(p.text) for p in speech if p.text.strip()]
    if CJK_CHAR.search(name):  # Chinese scripts write the speaker and the line on one line
        return f"{name}：{''.join(lines[:1])}" + "".join("\n" + line for line in lines[1:])
    if cue_name(name) is None:
        name = "@" + name  # Fountain's forced cue, which the plain-text reader also knows
    return "\n".join([name, *lines])
