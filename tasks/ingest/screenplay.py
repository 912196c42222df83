"""Screenplay block structure: headings, action, character cues, parentheticals, dialogue and
transitions, with character spans into the document text.

Shared by sentence splitting (dialogue sentences carry their speaker) and by the heuristic
extractors (characters from cues, interactions from dialogue turns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.ingest.segment_sections import parse_heading

# A cue is a name in capitals: any script's capitals ("ÉLODIE", "ZOË"), digits after a word
# ("COP 2", "AGENT 47", "R2-D2"); `cue_name` checks that no letter is lower case.
EN_CUE = re.compile(
    r"^(?:@(?P<forced>[^\s(].*?)|(?P<name>[^\W\d_](?:[^\W_]|[ .'’\-&/#])*?(?:[^\W_]|[.'’])))"
    r"(?P<ext>(?:\s*\([^)]{1,20}\))*)\s*\^?\s*$"
)
_YEAR_OR_COUNT = re.compile(r"(?:^|\s)#?\d{3,}\b|^\S*\d\S*\s")  # "1982", "THE 300", "2ND UNIT …"
TRANSITION = re.compile(
    r"^(?:>\s*.+|[A-Z][A-Z .'’\-]*(?:TO:|IN:|OUT\.?|OUT:)|"
    r"FADE TO BLACK\.?|BLACKOUT\.?|THE END\.?|CUT TO BLACK\.?)\s*$"
)
PARENTHETICAL = re.compile(r"^\s*\(.*\)\s*$")
ZH_DIALOGUE = re.compile(
    r"^[\s\u00a0\u3000]*(?P<speaker>[^：:\s\u00a0\u3000，。！？“”\"（(]{1,16}?)[\s\u00a0\u3000]*[：:](?P<line>.*)$"
)
# Scripts that put no blank line after dialogue: a line that opens like stage direction
# ("The phone starts ringing.", "Holden answers it.", "He smiles.") after a finished line
# of dialogue ends the speech. Present-tense third person is the mark of action lines.
ACTION_OPENER = re.compile(
    r"^(?:(?:The|A|An|His|Her|Their|Its|Our)\s+[\w'’-]+(?:\s+[\w'’-]+)?|He|She|They|It|"
    r"[A-Z][a-z]+(?:\s[A-Z][a-z]+)?)\s+[a-z]+s\b"
)
SPEECH_END = re.compile(r"[.!?…'\"”’)\]-]\s*$")
NOT_CUES = frozenset(
    {
        "THE END",
        "CONTINUED",
        "MORE",
        "BACK TO SCENE",
        "INTERCUT",
        "MONTAGE",
        "END MONTAGE",
        "SUPER",
        "TITLE",
        "FLASHBACK",
        "END FLASHBACK",
        "LATER",
        "SILENCE",
        "BLACK",
        "CLOSE ON",
        "ANGLE ON",
    }
)


@dataclass(frozen=True)
class Block:
    kind: str  # heading | action | cue | parenthetical | dialogue | transition
    start: int
    end: int
    speaker: str | None = None  # raw cue text without extensions (dialogue and cue blocks)
    extension: str | None = None  # "V.O.", "O.S.", "CONT'D", ...


def cue_name(line: str) -> tuple[str, str | None] | None:
    """(name, extension) when `line` is an English character cue, else None."""
    stripped = line.strip()
    if not stripped or len(stripped) > 45 or stripped.endswith(":") or TRANSITION.match(stripped):
        return None
    match = EN_CUE.match(stripped)
    if not match:
        return None
    name = (match.group("forced") or match.group("name") or "").strip()
    if not name or len(name.split()) > 4 or name.rstrip(".") in NOT_CUES:
        return None
    if match.group("name") and (name != name.upper() or _YEAR_OR_COUNT.search(name)):
        return None  # a lower-case letter is no cue; a year or a count is no name
    extensions = re.findall(r"\(([^)]*)\)", match.group("ext") or "")
    return name, (", ".join(e.strip() for e in extensions) or None)


def _line_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    spans, cursor = [], start
    while cursor < end:
        newline = text.find("\n", cursor, end)
        stop = end if newline < 0 else newline
        spans.append((cursor, stop))
        cursor = stop + 1
    return spans


def parse_blocks(text: str, start: int, end: int, language: str) -> list[Block]:
    """Blocks of the screenplay text in [start, end) in reading order."""
    if language == "zh":
        return _parse_zh(text, start, end)
    blocks: list[Block] = []
    speaker: str | None = None
    extension: str | None = None
    opens_block = True
    for line_start, line_end in _line_spans(text, start, end):
        line = text[line_start:line_end]
        stripped = line.strip()
        if not stripped:
            speaker, opens_block = None, True
            continue
        s, e = line_start + (len(line) - len(line.lstrip())), line_start + len(line.rstrip())
        is_heading, opens_block = parse_heading(line, language, opens_block) is not None, False
        if is_heading:
            speaker = None
            blocks.append(Block("heading", s, e))
        elif TRANSITION.match(stripped):
            speaker = None
            blocks.append(Block("transition", s, e))
        elif (cue := cue_name(line)) is not None:
            speaker, extension = cue
            blocks.append(Block("cue", s, e, speaker, extension))
        elif speaker is not None and PARENTHETICAL.match(stripped):
            blocks.append(Block("parenthetical", s, e, speaker, extension))
        elif speaker is not None and not _speech_ends_here(blocks, text, stripped):
            _extend(blocks, Block("dialogue", s, e, speaker, extension))
        else:
            speaker = None
            _extend(blocks, Block("action", s, e))
    return blocks


def _speech_ends_here(blocks: list[Block], text: str, line: str) -> bool:
    """True when `line` reads as stage direction right after a finished line of dialogue."""
    if not blocks or blocks[-1].kind != "dialogue":
        return False
    previous = text[blocks[-1].start : blocks[-1].end]
    return bool(SPEECH_END.search(previous)) and bool(ACTION_OPENER.match(line))


def _extend(blocks: list[Block], block: Block) -> None:
    """Join wrapped lines: consecutive lines of the same kind and speaker form one block."""
    if blocks and blocks[-1].kind == block.kind and blocks[-1].speaker == block.speaker:
        last = blocks[-1]
        blocks[-1] = Block(last.kind, last.start, block.end, last.speaker, last.extension)
    else:
        blocks.append(block)


def _parse_zh(text: str, start: int, end: int) -> list[Block]:
    blocks: list[Block] = []
    for line_start, line_end in _line_spans(text, start, end):
        line = text[line_start:line_end]
        if not line.strip():
            continue
        s = line_start + (len(line) - len(line.lstrip(" \t\u00a0\u3000")))
        e = line_start + len(line.rstrip(" \t\u00a0\u3000"))
        if parse_heading(line, "zh"):
            blocks.append(Block("heading", s, e))
            continue
        match = ZH_DIALOGUE.match(line)
        if match and match.group("line").strip():
            speaker_end = line_start + match.end("speaker")
            blocks.append(Block("cue", s, speaker_end, match.group("speaker"), None))
            line_offset = line_start + match.start("line")
            body = text[line_offset:e]
            lead = len(body) - len(body.lstrip(" \t\u00a0\u3000"))
            blocks.append(Block("dialogue", line_offset + lead, e, match.group("speaker"), None))
        else:
            blocks.append(Block("action", s, e))
    return blocks
