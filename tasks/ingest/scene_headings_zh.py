"""Chinese scene headings read from one line: the scene number ("第12场", "12、", "场12", "（二）",
"序场"), then the place and its markers (`scene_markers_zh`)."""

from __future__ import annotations

import re

from tasks.ingest.scene_markers_zh import (
    IE_WORDS,
    NOTE,
    SEASON_WORDS,
    TIME_WORDS,
    fields_before_note,
    split_run_on_note,
    zh_fields,
)
from tasks.ingest.scene_shape import BLANKS, NUMBER_PREFIX, ZH_NUM, Shape, number_value
from tasks.text import zh_number

# Leading numbers: "第12场", "第十二场、", "12场"
ZH_SCENE_NO = re.compile(
    rf"^(?:第[{BLANKS}]*(?P<n>\d+|{ZH_NUM})|(?P<d>\d+))[{BLANKS}]*[场場幕](?P<sub>[A-Za-z])?"
    rf"(?:[{BLANKS}]*[、，,.．:：\-—]+)?[{BLANKS}]*"
)
# "场12，夜，体操馆内": the number after the word
ZH_SCENE_NO_AFTER = re.compile(rf"^[场場][{BLANKS}]*(?P<n>\d+)(?:[{BLANKS}]*[、，,.．:：\-—]+|[{BLANKS}]+)")
# The prologue: "序", "序场", "序幕", "序场A，基隆港", "序场（后期补拍）"
ZH_PROLOGUE = re.compile(rf"^序[场場幕]?[A-Za-z]?(?:$|[{BLANKS}，,、（(])")
# "（一）花生厂前面。", "一 受命": Chinese numerals in brackets or before a space
ZH_NUMERAL_PREFIX = re.compile(rf"^(?:[（(](?P<b>{ZH_NUM})[)）]|(?P<s>{ZH_NUM})[{BLANKS}]+)[{BLANKS}]*")
_RUN_IN_NUMBER = re.compile(r"^\d+(?=\D)")
_SENTENCE_END = re.compile(r"[。！？!?…；;”\"]$|[。！？]")


def _zh_numeral_heading(stripped: str) -> Shape | None:
    """A short line after a Chinese numeral ("（二）花生厂前面。", "三 止泊"), a heading only if the
    numbering around it agrees (sentences are allowed: such headings often describe the place in one)."""
    prefix = ZH_NUMERAL_PREFIX.match(stripped)
    rest = stripped[prefix.end() :] if prefix else ""
    limit = 80 if prefix.group("b") else 40
    if not prefix or not rest or len(stripped) > limit or re.search(r"[：:]", rest):
        return None
    if prefix.group("s") and len(rest) > 8:
        return None  # "一 受命" names a part; "三 个警察站在门外。" is a sentence
    value = zh_number(prefix.group("b") or prefix.group("s"))
    found, place, _ = zh_fields(rest.rstrip("。"))
    interior, time_of_day = IE_WORDS.get(found.get("ie", "")), TIME_WORDS.get(found.get("time", ""))
    return Shape(stripped, str(value), value, interior, place or None, time_of_day, "numbered")


def _number_end(line: str) -> int:
    """Where the text after a heading's scene number starts (0 when the line has no number)."""
    for pattern in (ZH_SCENE_NO, ZH_SCENE_NO_AFTER, NUMBER_PREFIX, _RUN_IN_NUMBER):
        if match := pattern.match(line):
            return match.end()
    return 0


def read_zh(line: str) -> Shape | None:
    stripped = line.strip(BLANKS)
    if stripped and ZH_PROLOGUE.match(stripped) and len(stripped) <= 40:
        found, place, _ = zh_fields(stripped[1:].lstrip("场場幕").lstrip("，,、 "))
        interior, time_of_day = IE_WORDS.get(found.get("ie", "")), TIME_WORDS.get(found.get("time", ""))
        return Shape(stripped, None, None, interior, place or None, time_of_day, "opens_block")
    if ZH_NUMERAL_PREFIX.match(stripped):
        return _zh_numeral_heading(stripped)
    # "书房,夜,内李明的回忆": a note run on after the markers is judged apart from the heading
    start = _number_end(stripped)
    body, note = split_run_on_note(stripped[start:])
    head = stripped[:start] + body
    # A note that reads as a sentence or speech ("71、林家，夜，内林母在批评林真心。") leaves a numbered
    # heading to the numbering around it, and makes an unnumbered line text.
    loose = bool(note) and (len(note) > 40 or bool(_SENTENCE_END.search(note) or re.search(r"[：:]", note)))
    explicit = ZH_SCENE_NO.match(head) or ZH_SCENE_NO_AFTER.match(head)
    # A scene number in words ("第12场", "场121") lets the heading list several places at length.
    limit = 80 if explicit else 40
    if not head or len(head) > limit or _SENTENCE_END.search(head):
        return None
    if re.search(r"[：:]", NOTE.sub("", head)):  # speech, unless the colon is in a closing note
        return None
    if head.endswith(("，", ",", "、")) or re.search(r"[a-z]{3}", head):
        return None
    number, strength, rest, spaced = None, None, head, False
    if scene := ZH_SCENE_NO.match(head) or ZH_SCENE_NO_AFTER.match(head):
        number, strength, rest = scene.group("n") or scene.group("d"), "explicit", head[scene.end() :]
    elif prefix := NUMBER_PREFIX.match(head):
        number = prefix.group("a") or prefix.group("p") or prefix.group("z")
        rest = head[prefix.end() :]
        spaced = not re.search(r"[、.．,，)）:]", prefix.group())
        # "2、3号仓库，夜，内", "12 305病房 内 日": a place may start with digits run into its name; digits
        # standing alone are a second number ("40 15 屋内，夜，内"), not a place
        if not rest or (rest[0].isdigit() and not re.match(r"\d+[^\W\d_]", rest)):
            return None
    elif run_in := _RUN_IN_NUMBER.match(head):
        # "117办公室日内": digits run into the text are not a scene number, unless the markers stand
        # apart ("1街巷  夜  外", "7外景  铁桥/东桥头  日"); then the numbering around it decides.
        rest = head[run_in.end() :]
        found, place, apart = fields_before_note(rest)
        if not (apart and (found.get("ie") or found.get("time")) and place and len(place) <= 15):
            return None
        interior, time_of_day = IE_WORDS.get(found.get("ie", "")), TIME_WORDS.get(found.get("time", ""))
        value = int(run_in.group())
        return Shape(stripped, str(value), value, interior, place, time_of_day, "numbered")
    elif re.match(r"^\d", head):
        return None
    found, place, apart = fields_before_note(rest)
    # "场129，日，到夜阿信家/田埂/街道/大树下/河堤": a numbered scene may list many places
    if place and ((len(place) > 20 and strength != "explicit") or re.search(r"[。！？“”\"]", place)):
        return None
    value = number_value(number)
    number = str(value) if number and value is not None and not number[0].isdigit() else number
    interior = IE_WORDS.get(found.get("ie", ""))
    time_of_day = TIME_WORDS.get(found.get("time", ""))
    if time_of_day and "season" in found:
        time_of_day = f"{SEASON_WORDS[found['season']]} {time_of_day}"
    markers = [found[k] for k in ("ie", "time", "season") if k in found]
    marked = bool(interior or time_of_day)
    if spaced and rest[0].isdigit() and not (apart and marked):
        return None  # "2 3个人走进来": after a bare space, digits start a place only in a marked heading
    if strength is None and number is None:
        if not (apart and marked) or len(place) > 15 or loose:
            return None
        # "火车站台，夜，外": a heading when text follows; "日 内" alone completes a "第N场" above it
        strength = "standalone" if interior and time_of_day and place else "follow"
        return Shape(stripped, None, None, interior, place or None, time_of_day, strength, True, markers)
    if strength is None:
        if not place and not marked:
            return None
        # "3 个警察站在门外" has digits and a run-in 外 but no heading's shape: its numbering decides
        # "36B.门外" under "36A.…" is a sub-scene: like its number, it stays in scene 36 unless it
        # opens a block (the numbering decides), whatever markers its place carries.
        sub_scene = number[-1].isalpha()
        strength = (
            "explicit" if marked and (apart or not spaced) and not loose and not sub_scene else "numbered"
        )
    return Shape(stripped, number, value, interior, place or None, time_of_day, strength, False, markers)
