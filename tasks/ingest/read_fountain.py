"""Fountain (.fountain) screenplays read per the Fountain 1.1 syntax into plain screenplay text.

Notes `[[...]]` and boneyard `/* ... */` are removed; sections (#), synopses (=) and page breaks
(===) are outline, not script, and are left out; emphasis marks are dropped. The title page is kept
as `Key: value` lines (the document's title is read from `Title:`).
"""

from __future__ import annotations

import re

from tasks.ingest.render_screenplay import Paragraph, render

HIDDEN = re.compile(r"/\*.*?\*/|\[\[.*?\]\]", re.DOTALL)
GONE = "\x00"  # where hidden text was: a line left holding only this is dropped, not made blank
TITLE_KEY = re.compile(r"^(?P<key>[A-Za-z][A-Za-z ]{0,30}):[ \t]*(?P<value>.*)$")
HEADING = re.compile(r"^(?:INT\.?/EXT|EXT\.?/INT|INT|EXT|EST|I/E)[. ]", re.IGNORECASE)
SCENE_NUMBER = re.compile(r"[ \t]+#(?P<n>[\w.\-]+)#[ \t]*$")
TRANSITION = re.compile(r"^[^a-z]*TO:$")
CENTERED = re.compile(r"^>\s*(?P<text>.*?)\s*<$")
EMPHASIS = re.compile(r"(?<!\\)(\*{1,3}|_)(?=\S)(?P<text>.+?)(?<=\S)(?<!\\)\1")
ESCAPED = re.compile(r"\\([*_\\])")


def fountain_text(source: str) -> str:
    """The plain screenplay text of a Fountain document."""
    source = source.replace("\r\n", "\n").replace("\r", "\n")
    source = HIDDEN.sub(GONE, source)  # an unclosed note or boneyard stays text, as it is not markup
    lines = [line for line in source.split("\n") if line.replace(GONE, "").strip() or GONE not in line]
    lines = [line.replace(GONE, "") for line in lines]
    title, body = _title_page(lines)
    paragraphs = _paragraphs(body)
    text = render(paragraphs)
    return "\n".join(title) + "\n\n" + text if title else text


def _title_page(lines: list[str]) -> tuple[list[str], list[str]]:
    """(title page as `Key: value` lines, the lines after it)."""
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines) or not TITLE_KEY.match(lines[start]):
        return [], lines
    entries: list[list[str]] = []
    index = start
    while index < len(lines) and lines[index].strip():
        line = lines[index]
        match = TITLE_KEY.match(line)
        if match and not line[:1].isspace():
            entries.append([match.group("key").strip(), match.group("value").strip()])
        elif entries and line[:1].isspace():  # an indented continuation of the value above
            entries[-1].append(line.strip())
        else:  # not "Key: value": the script starts here
            break
        index += 1
    title = [f"{key}: {_plain(' '.join(v for v in values if v))}" for key, *values in entries]
    return title, lines[index:]


def _plain(text: str) -> str:
    """Text without Fountain's emphasis marks (*italic*, **bold**, _underline_) and escapes."""
    previous = None
    while previous != text:
        previous, text = text, EMPHASIS.sub(r"\g<text>", text)
    return ESCAPED.sub(r"\1", text)


def _paragraphs(lines: list[str]) -> list[Paragraph]:
    paragraphs: list[Paragraph] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        stripped = line.strip()
        blank_before = index == 0 or not lines[index - 1].strip()
        next_line = lines[index + 1] if index + 1 < len(lines) else ""
        index += 1
        if not stripped or stripped.startswith(("#", "===")) or re.match(r"^=(?!=)", stripped):
            continue  # a blank line, a section, a page break or a synopsis
        if blank_before and stripped.startswith(".") and not stripped.startswith(".."):
            paragraphs.append(_heading(stripped[1:]))
        elif blank_before and HEADING.match(stripped):
            paragraphs.append(_heading(stripped))
        elif (centered := CENTERED.match(stripped)) is not None:
            paragraphs.append(Paragraph("action", _plain(centered.group("text"))))
        elif stripped.startswith(">"):
            paragraphs.append(Paragraph("transition", _plain(stripped[1:].strip())))
        elif blank_before and TRANSITION.match(stripped) and not next_line.strip():
            paragraphs.append(Paragraph("transition", _plain(stripped)))
        elif blank_before and next_line.strip() and _is_character(stripped):
            paragraphs.append(Paragraph("character", _plain(stripped.removeprefix("@").rstrip("^ \t"))))
            index = _speech(lines, index, paragraphs)
        else:
            _action(line, paragraphs, blank_before)
    return paragraphs


def _heading(text: str) -> Paragraph:
    match = SCENE_NUMBER.search(text)
    number = match.group("n") if match else None
    text = text[: match.start()] if match else text
    return Paragraph("heading", _plain(text.strip()), number)


def _is_character(line: str) -> bool:
    """A cue: `@` and a name, or a line in capitals with at least one letter (extensions aside)."""
    if line.startswith("@"):
        return len(line) > 1
    name = re.sub(r"\([^)]*\)", "", line).rstrip("^ \t")
    return any(c.isalpha() for c in name) and name == name.upper() and not line.startswith("!")


def _speech(lines: list[str], index: int, paragraphs: list[Paragraph]) -> int:
    """Parentheticals and dialogue up to the next blank line; returns the index after them."""
    while index < len(lines) and (lines[index].strip() or lines[index] == "  "):
        line = lines[index].strip()
        index += 1
        if not line:
            continue  # two spaces: a deliberate empty line inside dialogue
        if line.startswith("(") and line.endswith(")"):
            paragraphs.append(Paragraph("parenthetical", _plain(line)))
        else:
            text = _plain(line.removeprefix("~"))
            if paragraphs[-1].kind == "dialogue":  # wrapped lines of one speech stay one paragraph
                last = paragraphs.pop()
                text = last.text + "\n" + text
            paragraphs.append(Paragraph("dialogue", text))
    return index


def _action(line: str, paragraphs: list[Paragraph], blank_before: bool) -> None:
    """Action lines; consecutive lines form one paragraph, their breaks kept."""
    text = _plain(line.rstrip().removeprefix("!").removeprefix("~"))
    if not blank_before and paragraphs and paragraphs[-1].kind == "action":
        last = paragraphs.pop()
        text = last.text + "\n" + text
    paragraphs.append(Paragraph("action", text))
