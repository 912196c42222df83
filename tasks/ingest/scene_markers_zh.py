"""Chinese scene-heading markers: interior/exterior (内/外), the time of day (日/夜/清晨…) and a season
run into it, found among a heading's tokens, run into the end of its place, in a closing bracket
("（夜，内）") or ahead of a closing note ("（幻境）")."""

from __future__ import annotations

import re

from tasks.ingest.scene_shape import BLANKS

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
RUN_IN = sorted([*IE_WORDS, *TIME_WORDS, *SEASON_WORDS], key=len, reverse=True)
# A bracketed note closing a heading: "（幻境）", "（字幕：…）"
NOTE = re.compile(r"[（(][^()（）]*[)）]\s*$")
_ZH_SPLIT = re.compile(rf"[{BLANKS}，,、/／·|｜\-—–~～]+|[.．](?!\d)")
_ZH_TOKEN = re.compile(rf"(?:(?!{_ZH_SPLIT.pattern}).)+")


def _kind(word: str) -> str:
    return "ie" if word in IE_WORDS else "time" if word in TIME_WORDS else "season"


def _peel_run_in(place: str, found: dict[str, str]) -> str:
    """Strip 内/外, times and seasons written into the end of the place ("剧院秋清晨外")."""
    while True:
        for word in RUN_IN:
            kind = _kind(word)
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
        for word in RUN_IN:
            if rest.startswith(word):
                kind = _kind(word)
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


def split_run_on_note(slug: str) -> tuple[str, str]:
    """(heading, note) of a heading whose note runs on after its markers: "书房,夜,内李明的回忆" is
    "书房,夜,内" and "李明的回忆"; (slug, "") when no note follows the markers."""
    tokens = [(m.start(), m.group()) for m in _ZH_TOKEN.finditer(slug)]
    found: dict[str, str] = {}
    first = next((k for k, (_, token) in enumerate(tokens) if _marker_token(token, {})), None)
    # The place comes first: "日 外 县衙门口" names its place after the markers, and "和  51. 黄昏 外 竹林"
    # (a number behind OCR debris) has none before them.
    if not first or any(token.isdigit() for _, token in tokens[:first]):
        return slug, ""
    k = first
    while k < len(tokens) and _marker_token(tokens[k][1], found):
        k += 1
    if k == len(tokens):
        return slug, ""
    start, token = tokens[k]
    for word in RUN_IN:
        if token.startswith(word):
            if _kind(word) in found:
                return slug, ""  # "外/内（幻境）", "日-黄昏": a second marker of a kind, not a note
            if _kind(word) != "season":
                found[_kind(word)] = word
                start += len(word)
            break
    # Both markers must stand before the note, so "街上，夜里很安静" is no heading with a note.
    if "ie" not in found or "time" not in found:
        return slug, ""
    return slug[:start].rstrip(BLANKS), slug[start:].lstrip(BLANKS)


def _both_sides(token: str, found: dict[str, str]) -> bool:
    """True for the second of "内 / 外" (split apart at the slash), recording interior and exterior."""
    if {token, found.get("ie")} != {"内", "外"}:
        return False
    found["ie"] = "内/外"
    return True


def zh_fields(slug: str) -> tuple[dict[str, str], str, bool]:
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
    while tokens and (_marker_token(tokens[-1], found) or _both_sides(tokens[-1], found)):
        tokens.pop()
    while tokens and _marker_token(tokens[0], found):
        tokens.pop(0)
    apart = bool(found)
    if tokens:
        tokens[-1] = _peel_run_in(tokens[-1], found)
    return found, " ".join(t for t in tokens if t), apart


def fields_before_note(slug: str) -> tuple[dict[str, str], str, bool]:
    """`_zh_fields`, leaving out a closing note that is not markers ("34石棺  夜  内（幻境）",
    "1外景  城镇边缘  日  （字幕：一九四八初冬）")."""
    found, place, apart = zh_fields(slug)
    note = NOTE.search(slug)
    if note and note.start() > 0 and (not found or len(place) > 15 or re.search(r"[（(]", place)):
        return zh_fields(slug[: note.start()])
    return found, place, apart
