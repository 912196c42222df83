"""What an LLM states request shows of a scene: only the lines where its characters can be seen or
heard. A state is something a camera or microphone could capture, and the source shows such things
in action sentences that name a character or say "he" or "she", in a speaker's parentheticals and
in cue extensions (V.O., O.S.; a Chinese cue's manner words). The spoken lines themselves and the
sentences that name no one are left out: on the bundled samples they are about two fifths of a
scene's tokens, read a second time after the extraction read them. Every line shown is a verbatim
span of the scene, so an evidence quote taken from it is found in the scene text as before."""

from __future__ import annotations

import re

from tasks.character_states.offline import SENTENCE, Character, _owner, _pattern
from tasks.continuity.scenes import Scene
from tasks.ingest.screenplay import parse_blocks

GAP = "…"  # marks source left out between two shown lines
# A sentence that says "she" or "his" most often goes on about the character named just before.
PRONOUN = {
    "en": re.compile(r"\b(?:he|she|him|his|her|hers|they|them|their)\b", re.IGNORECASE),
    "zh": re.compile(r"[他她]"),
}


def observable_spans(
    scene: Scene, text: str, language: str, characters: list[Character]
) -> list[tuple[int, int]]:
    """Absolute (start, end) spans of the scene's lines that can show a candidate's state."""
    patterns = {c.entity_id: _pattern(c, language) for c in characters}
    pronoun = PRONOUN["zh" if language == "zh" else "en"]
    end = scene.char_start + len(scene.text)
    spans: list[tuple[int, int]] = []
    cue: tuple[int, int] | None = None  # the cue block just before, if the last block was one
    for block in parse_blocks(text, scene.char_start, end, language):
        body = text[block.start : block.end]
        if block.kind == "action":
            for match in SENTENCE.finditer(body):
                sentence = match.group(0)
                if pronoun.search(sentence) or any(p.search(sentence) for p in patterns.values()):
                    lead = len(sentence) - len(sentence.lstrip())
                    start = block.start + match.start() + lead
                    spans.append((start, start + len(sentence.strip())))
        elif block.kind in ("parenthetical", "cue") and _shows_manner(block, patterns, language):
            if block.kind == "parenthetical" and cue is not None and not text[cue[1] : block.start].strip():
                # The direction with its speaker's cue: "(quietly)" alone says nothing of who.
                if spans and spans[-1] == cue:
                    spans.pop()
                spans.append((cue[0], block.end))
            else:
                spans.append((block.start, block.end))
        cue = (block.start, block.end) if block.kind == "cue" else None
    return spans


def _shows_manner(block, patterns: dict[str, re.Pattern[str]], language: str) -> bool:
    owner, name_end = _owner(block.speaker, patterns)
    if owner is None:
        return False
    if block.kind == "parenthetical":
        return True
    if language == "zh":  # manner words between the name and the colon
        return bool((block.speaker or "")[name_end:].strip())
    return bool(block.extension)


def observable_text(scene: Scene, text: str, language: str, characters: list[Character]) -> str:
    """The scene's observable lines, one per line, with a gap mark where source was left out; '' when
    the scene shows none of its candidates."""
    lines: list[str] = []
    previous_end = scene.char_start
    for start, stop in observable_spans(scene, text, language, characters):
        if text[previous_end:start].strip() and lines:
            lines.append(GAP)
        lines.append(" ".join(text[start:stop].split()))
        previous_end = stop
    return "\n".join(lines)
