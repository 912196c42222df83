"""Scene headings decided by a line's shape and its context.

A line is read into a `Shape`: an optional scene number (Arabic or Chinese numerals, "第N场",
"12、", "7.", "3 "), the place, interior/exterior (INT/EXT, 内/外) and the time (DAY/NIGHT,
日/夜/清晨…, with a season run into it). How much the shape alone says decides its `strength`:

- "explicit": a heading on its own (an INT./EXT. slugline at the start of the line, "第12场",
  a numbered line carrying 内/外 or 日/夜 markers);
- "block": a heading when it opens a block (after a blank line or at the start): sluglines
  with a qualifier ("INTERCUT - INT. …", "FLASHBACK - EXT. …"), montage items ("-- INT. …"),
  unnumbered "PLACE - NIGHT" lines, unnumbered "火车站台，夜，外" lines followed by text;
- "numbered": a numbered short line with no markers ("97.画面组合", "12、THE BEACH") that is a
  heading only when its number fits the numbering of the headings around it.

`read_shape` is the line alone; `scene_detect.detect` applies the context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from tasks.text import ZH_DIGITS, ZH_UNITS

BLANKS = " \t\u00a0\u3000"
ZH_NUM = "[零〇一二两三四五六七八九十百千]+"
IE_WORDS = {
    "内": "INT",
    "外": "EXT",
    "内景": "INT",
    "外景": "EXT",
    "内外": "INT/EXT",
    "内/外": "INT/EXT",
    "外/内": "INT/EXT",
}
TIME_WORDS = {
    "日": "DAY",
    "白天": "DAY",
    "日间": "DAY",
    "夜": "NIGHT",
    "夜晚": "NIGHT",
    "夜间": "NIGHT",
    "晚上": "NIGHT",
    "深夜": "NIGHT",
    "午夜": "MIDNIGHT",
    "晨": "MORNING",
    "清晨": "MORNING",
    "早晨": "MORNING",
    "早上": "MORNING",
    "上午": "MORNING",
    "中午": "NOON",
    "下午": "AFTERNOON",
    "黎明": "DAWN",
    "凌晨": "DAWN",
    "昏": "DUSK",
    "黄昏": "DUSK",
    "傍晚": "EVENING",
}
SEASON_WORDS = {
    "春": "SPRING",
    "夏": "SUMMER",
    "秋": "AUTUMN",
    "冬": "WINTER",
    "春天": "SPRING",
    "夏天": "SUMMER",
    "秋天": "AUTUMN",
    "冬天": "WINTER",
}
_RUN_IN = sorted([*IE_WORDS, *TIME_WORDS, *SEASON_WORDS], key=len, reverse=True)

# Leading numbers: "第12场", "第十二场、", "12、", "7.", "88..", "3 ", "（3）", "三、", "12A."
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
NUMBER_PREFIX = re.compile(
    rf"^(?:[（(](?P<p>\d+[A-Za-z]?)[)）]|(?P<a>\d+[A-Za-z]?)(?:[{BLANKS}]*[、.．,，)）:]+|[{BLANKS}]+)"
    rf"|(?P<z>{ZH_NUM})[{BLANKS}]*[、.．])[{BLANKS}]*"
)
EN_SLUG = re.compile(r"(?P<ie>INT\.?[ ]?/[ ]?EXT|EXT\.?[ ]?/[ ]?INT|I/E|INT|EXT|EST)(?:\.|[ \t]|$)")
BULLET = re.compile(r"^(?:-{1,2}|[—–•*]|[A-Z0-9]{1,2}\))[ \t]+")
QUALIFIER = re.compile(r"^(?P<q>[A-Z][A-Z' ]{1,30}?)[ \t]*(?:-{1,2}|–|—|:)[ \t]*(?=(?:INT|EXT|I/E|EST)\b)")
INTERCUT = re.compile(r"^INTERCUT(?:[ \t]*(?:-{1,2}|–|—|:)[ \t]*|[ \t]+(?:BETWEEN[ \t]+)?)(?P<rest>.+)$")
NON_TIMES = frozenset({"CONTINUOUS", "LATER", "MOMENTS LATER", "SAME TIME"})
EN_TIMES = (
    "MOMENTS LATER",
    "SAME TIME",
    "MAGIC HOUR",
    "CONTINUOUS",
    "AFTERNOON",
    "MIDNIGHT",
    "MORNING",
    "EVENING",
    "SUNRISE",
    "SUNSET",
    "NIGHT",
    "LATER",
    "DAWN",
    "DUSK",
    "NOON",
    "DAY",
)
_EN_TIME_TAIL = re.compile(
    r"(?:[ \t]*(?:-{1,2}|–|—|,|/)?[ \t]*\(?(?P<t>" + "|".join(EN_TIMES) + r")\)?\.?)[ \t]*$"
)
_TRAILING_NUMBER = re.compile(r"[ \t]+\(?(?P<n>[A-Z]?\d+[A-Z]?)\)?(?:[ \t]*\*)?[ \t]*$|[ \t]*\*+[ \t]*$")
_SENTENCE_END = re.compile(r"[。！？!?…；;”\"]$|[。！？]")
# A bracketed note closing a heading: "（幻境）", "（字幕：…）"
_NOTE = re.compile(r"[（(][^()（）]*[)）]\s*$")
_ZH_SPLIT = re.compile(rf"[{BLANKS}，,、/／·|｜\-—–~～]+|[.．](?!\d)")


@dataclass(frozen=True)
class Shape:
    text: str
    number: str | None
    value: int | None  # the number's value, for checking the sequence
    interior: str | None
    location: str | None
    time_of_day: str | None
    # explicit | opens_block (after a blank line) | standalone (text must follow) | numbered | follow
    # ("follow": a place/time line that completes a bare "第N场" above it)
    strength: str
    needs_text_after: bool = False
    markers: list[str] = field(default_factory=list)


_ZH_SPEECH = re.compile(r"^[^\s：:，。！？“”\"（(]{1,12}[：:]\S")
_EN_CUE = re.compile(r"^[ \t]*[A-Z][A-Z .'’\-]{1,30}(?:\([^)]{1,12}\))?[ \t]*$")


def speech_lines(text: str, language: str) -> int:
    """How many lines read as a character's speech ("林舟：…", or an English cue above a line)."""
    lines = text.split("\n")
    if language == "zh":
        return sum(1 for line in lines if _ZH_SPEECH.match(line.strip(BLANKS)))
    return sum(
        1
        for line, after in zip(lines, lines[1:])
        if _EN_CUE.match(line) and after.strip() and not after.strip().isupper()
    )


def zh_number(text: str) -> int | None:
    """The value of a Chinese numeral up to the thousands ("十二" 12, "一百零五" 105)."""
    if text.isdigit():
        return int(text)
    if len(text) > 1 and all(char in ZH_DIGITS for char in text):
        return int("".join(str(ZH_DIGITS[char]) for char in text))  # "一零二": digit by digit, 102
    total, digit = 0, None
    for char in text:
        if char in ZH_DIGITS:
            digit = ZH_DIGITS[char]
        elif char in ZH_UNITS:
            total += (1 if digit is None else digit) * ZH_UNITS[char]
            digit = None
        else:
            return None
    return total + (digit or 0)


def number_value(number: str | None) -> int | None:
    """The value of a scene number ("12", "12A", "十二"), or None."""
    if not number:
        return None
    digits = re.match(r"\d+", number)
    return int(digits.group()) if digits else zh_number(number)


# --- English ------------------------------------------------------------------------------


def _mostly_upper(slug: str) -> bool:
    letters = [c for c in slug if c.isalpha() and c.isascii()]
    return bool(letters) and sum(c.isupper() for c in letters) >= 0.8 * len(letters)


def split_en_slug(slug: str, ie: str | None) -> tuple[str | None, str | None, str | None]:
    """(interior, location, time) of an English slugline's text after any number."""
    slug = slug.strip().rstrip(".").strip()
    interior = None
    if ie:
        compact = ie.replace(" ", "").replace(".", "").upper()
        interior = {"INT": "INT", "EXT": "EXT", "EST": "EXT"}.get(compact, "INT/EXT")
        slug = slug[len(ie) :].lstrip(". ").strip()
    times = []
    while (match := _EN_TIME_TAIL.search(slug)) and match.start() > 0:
        times.insert(0, match.group("t"))
        slug = slug[: match.start()].rstrip(" -–—.,(")
    # "NIGHT - CONTINUOUS": the time of day is the first word; a lone "CONTINUOUS" stays as written.
    time_of_day = times[0] if times else None
    location = slug.strip(" -–—") or None
    return interior, location, time_of_day


def _strip_trailing_number(slug: str, number: str | None) -> tuple[str, str | None]:
    match = _TRAILING_NUMBER.search(slug)
    if not match or match.start() == 0:
        return slug, number
    trailing = match.group("n")
    if trailing and number and trailing != number:
        return slug, number
    return slug[: match.start()], number or trailing


def _separated_time(location: str | None, body: str, time_of_day: str | None) -> bool:
    """True when the time stands after a dash ("THE BEACH - NIGHT"), not inside a phrase ("THE NEXT DAY")."""
    dash_time = rf"[ \t](?:-{{1,2}}|–|—)[ \t]*\(?{time_of_day}\b"
    return bool(location and time_of_day and re.search(dash_time, body))


_BOOKENDED = re.compile(r"^(?P<n>\d{1,4}[A-Z]?)(?:[ \t]+(?P<body>\S.*?))?[ \t]+(?P=n)$")
_CONTINUED = re.compile(r"^\(?(?:CONTINUED|CONT'D)\b")


def _bookended(stripped: str) -> Shape | None:
    """A heading with the scene number in both margins, as shooting scripts print it ("4 THE VILLAGE
    OF NALIBOKI 4", "106 106"); "6A CONTINUED: 6A" is the top of a page, not a scene."""
    match = _BOOKENDED.match(stripped)
    body = (match.group("body") or "") if match else ""
    if not match or _CONTINUED.match(body) or (body and not _mostly_upper(body)):
        return None
    number = match.group("n")
    interior, location, time_of_day = (None, None, None)
    if body:
        slug = EN_SLUG.match(body)
        interior, location, time_of_day = split_en_slug(body, slug.group("ie") if slug else None)
    return Shape(stripped, number, number_value(number), interior, location, time_of_day, "explicit")


def read_en(line: str) -> Shape | None:
    stripped = line.strip(BLANKS)
    if not stripped or len(stripped) > 120 or stripped.startswith(". ") or stripped.endswith(":"):
        return None
    if bookend := _bookended(stripped):
        return bookend
    rest, strength = stripped, "explicit"
    if (bullet := BULLET.match(rest)) and EN_SLUG.match(rest[bullet.end() :]):
        rest, strength = rest[bullet.end() :], "opens_block"  # a slugline inside a montage
    number = None
    prefix = NUMBER_PREFIX.match(rest)
    if prefix and (prefix.group("a") or prefix.group("p")):
        number, rest = prefix.group("a") or prefix.group("p"), rest[prefix.end() :]
    if not EN_SLUG.match(rest) and (qualifier := QUALIFIER.match(rest)):
        rest, strength = rest[qualifier.end() :], "opens_block"  # "FLASHBACK - INT. …", "INTERCUT - INT. …"
    elif (intercut := INTERCUT.match(rest)) and _mostly_upper(rest):
        body, number = _strip_trailing_number(intercut.group("rest"), number)
        ie = EN_SLUG.match(body)
        interior, location, time_of_day = split_en_slug(body, ie.group("ie") if ie else None)
        return Shape(stripped, number, number_value(number), interior, location, time_of_day, "opens_block")
    slug = EN_SLUG.match(rest)
    if slug and _mostly_upper(rest):
        body, number = _strip_trailing_number(rest, number)
        interior, location, time_of_day = split_en_slug(body, slug.group("ie"))
        return Shape(stripped, number, number_value(number), interior, location, time_of_day, strength)
    if not _mostly_upper(rest) or len(rest) > 60 or rest.endswith(("!", "?")):
        return None
    body, number = _strip_trailing_number(rest, number) if number else (rest, None)
    _, location, time_of_day = split_en_slug(body, None)
    if not location or not re.search(r"[A-Z]{2}", location):
        return None
    if number is not None:  # "87、BLACK SCREEN": a heading if the numbering around it agrees
        return Shape(stripped, number, number_value(number), None, location, time_of_day, "numbered")
    if _separated_time(location, body, time_of_day) and time_of_day not in NON_TIMES:
        return Shape(stripped, None, None, None, location, time_of_day, "opens_block", needs_text_after=True)
    return None


# --- Chinese ------------------------------------------------------------------------------


def _peel_run_in(place: str, found: dict[str, str]) -> str:
    """Strip 内/外, times and seasons written into the end of the place ("剧院秋清晨外")."""
    while True:
        for word in _RUN_IN:
            kind = "ie" if word in IE_WORDS else "time" if word in TIME_WORDS else "season"
            if kind in found or not place.endswith(word) or len(place) <= len(word):
                continue
            if kind == "season" and "time" not in found:
                continue  # "长春" is a place; a season only stands before a time ("秋清晨")
            found[kind] = word
            place = place[: -len(word)].rstrip(BLANKS)
            break
        else:
            return place


def _marker_token(token: str, found: dict[str, str]) -> bool:
    """True when the token is made of markers only ("夜", "外", "日内", "秋清晨"), recording them."""
    trial: dict[str, str] = {}
    rest = token
    while rest:
        for word in _RUN_IN:
            if rest.startswith(word):
                kind = "ie" if word in IE_WORDS else "time" if word in TIME_WORDS else "season"
                if kind in trial or kind in found:
                    return False
                trial[kind] = word
                rest = rest[len(word) :]
                break
        else:
            return False
    if not trial or set(trial) == {"season"}:
        return False
    found.update(trial)
    return True


def _zh_fields(slug: str) -> tuple[dict[str, str], str, bool]:
    """(markers found, place, whether a marker stood apart from the place)."""
    found: dict[str, str] = {}
    bracket = re.search(r"[（(](?P<inner>[^()（）]{1,8})[)）]\s*$", slug)
    if bracket:
        inner_tokens = [t for t in _ZH_SPLIT.split(bracket.group("inner")) if t]
        trial: dict[str, str] = {}
        if inner_tokens and all(_marker_token(t, trial) for t in inner_tokens):
            found.update(trial)
            slug = slug[: bracket.start()]
    tokens = [t for t in _ZH_SPLIT.split(slug) if t]
    while tokens and _marker_token(tokens[-1], found):
        tokens.pop()
    while tokens and _marker_token(tokens[0], found):
        tokens.pop(0)
    apart = bool(found)
    if tokens:
        tokens[-1] = _peel_run_in(tokens[-1], found)
    return found, " ".join(t for t in tokens if t), apart


def _fields_before_note(slug: str) -> tuple[dict[str, str], str, bool]:
    """`_zh_fields`, leaving out a closing note that is not markers ("34石棺  夜  内（幻境）",
    "1外景  城镇边缘  日  （字幕：一九四八初冬）")."""
    found, place, apart = _zh_fields(slug)
    note = _NOTE.search(slug)
    if note and note.start() > 0 and (not found or len(place) > 15 or re.search(r"[（(]", place)):
        return _zh_fields(slug[: note.start()])
    return found, place, apart


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
    found, place, _ = _zh_fields(rest.rstrip("。"))
    interior, time_of_day = IE_WORDS.get(found.get("ie", "")), TIME_WORDS.get(found.get("time", ""))
    return Shape(stripped, str(value), value, interior, place or None, time_of_day, "numbered")


def read_zh(line: str) -> Shape | None:
    stripped = line.strip(BLANKS)
    if stripped and ZH_PROLOGUE.match(stripped) and len(stripped) <= 40:
        found, place, _ = _zh_fields(stripped[1:].lstrip("场場幕").lstrip("，,、 "))
        interior, time_of_day = IE_WORDS.get(found.get("ie", "")), TIME_WORDS.get(found.get("time", ""))
        return Shape(stripped, None, None, interior, place or None, time_of_day, "opens_block")
    if ZH_NUMERAL_PREFIX.match(stripped):
        return _zh_numeral_heading(stripped)
    explicit = ZH_SCENE_NO.match(stripped) or ZH_SCENE_NO_AFTER.match(stripped)
    # A scene number in words ("第12场", "场121") lets the heading list several places at length.
    limit = 80 if explicit else 40
    if not stripped or len(stripped) > limit or _SENTENCE_END.search(stripped):
        return None
    if re.search(r"[：:]", _NOTE.sub("", stripped)):  # speech, unless the colon is in a closing note
        return None
    if stripped.endswith(("，", ",", "、")) or re.search(r"[a-z]{3}", stripped):
        return None
    number, strength, rest, spaced = None, None, stripped, False
    if scene := ZH_SCENE_NO.match(stripped) or ZH_SCENE_NO_AFTER.match(stripped):
        number, strength, rest = scene.group("n") or scene.group("d"), "explicit", stripped[scene.end() :]
    elif prefix := NUMBER_PREFIX.match(stripped):
        number = prefix.group("a") or prefix.group("p") or prefix.group("z")
        rest = stripped[prefix.end() :]
        spaced = not re.search(r"[、.．,，)）:]", prefix.group())
        # "2、3号仓库，夜，内", "91、317 教室，日，内": a place may start with digits after a written
        # separator; after a bare space they are a second number ("40 15 …"), not a place
        if not rest or (rest[0].isdigit() and (spaced or not re.match(r"\d+[^\W\d_]", rest))):
            return None
    elif run_in := re.match(r"^\d+(?=\D)", stripped):
        # "117办公室日内": digits run into the text are not a scene number, unless the markers stand
        # apart ("1街巷  夜  外", "7外景  铁桥/东桥头  日"); then the numbering around it decides.
        rest = stripped[run_in.end() :]
        found, place, apart = _fields_before_note(rest)
        if not (apart and (found.get("ie") or found.get("time")) and place and len(place) <= 15):
            return None
        interior, time_of_day = IE_WORDS.get(found.get("ie", "")), TIME_WORDS.get(found.get("time", ""))
        value = int(run_in.group())
        return Shape(stripped, str(value), value, interior, place, time_of_day, "numbered")
    elif re.match(r"^\d", stripped):
        return None
    found, place, apart = _fields_before_note(rest)
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
    if strength is None and number is None:
        if not (apart and marked) or len(place) > 15:
            return None
        # "火车站台，夜，外": a heading when text follows; "日 内" alone completes a "第N场" above it
        strength = "standalone" if interior and time_of_day and place else "follow"
        return Shape(stripped, None, None, interior, place or None, time_of_day, strength, True, markers)
    if strength is None:
        if not place and not marked:
            return None
        # "3 个警察站在门外" has digits and a run-in 外 but no heading's shape: its numbering decides
        strength = "explicit" if marked and (apart or not spaced) else "numbered"
    return Shape(stripped, number, value, interior, place or None, time_of_day, strength, False, markers)


@lru_cache(maxsize=1 << 16)  # every stage that parses blocks asks again for the same lines
def read_shape(line: str, language: str) -> Shape | None:
    """The heading shape of one line, or None (the line alone, without context). Shapes are shared:
    never change one."""
    shape = read_en(line)
    if language != "zh" or (shape is not None and shape.strength == "explicit"):
        return shape
    return read_zh(line) or shape
