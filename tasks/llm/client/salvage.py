"""What a reply cut at its token limit still holds: every list item the model finished.

A small model that loops repeats one item until its limit ("source": "X", "target": "X", ... forty
times), so a larger limit only buys more repeats, and a cut reply is not JSON. The items written in
full before the cut are as good as those of a reply that ended: the JSON is closed after the last
complete list item, lists the model never reached are empty, and items repeating an earlier one
word for word are dropped. The caller records that the reply was cut and what was kept.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel


@dataclass(frozen=True)
class Salvage:
    content: str  # the closed JSON, ready for the response model
    kept: int  # items of the reply's own lists kept
    repeats: int  # list items dropped as word-for-word repeats (at any depth)


TOP_LIST = ["{", "["]  # inside one of the reply object's own lists
# Grammars leave whitespace between JSON tokens free, and a small model may write nothing but spaces
# after its last value until its limit (a merge judgment: the reason closed, then 200 spaces).
WHITESPACE_LOOP = 32  # trailing whitespace characters that mean the model had finished writing


def last_complete_item_prefix(text: str) -> str | None:
    """`text` (a JSON object cut anywhere) up to the end of the last complete item of one of its
    own lists, closed; None when no such item was completed. Only whole items of the object's own
    lists count: a cut inside an item (an entity without its aliases) drops that item."""
    stack: list[str] = []  # "{" or "[" of each open container
    in_string = escaped = False
    cut: int | None = None
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                if stack == TOP_LIST:  # a string item just ended
                    cut = index + 1
            continue
        if char == '"':
            in_string = True
        elif char in "{[":
            stack.append(char)
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
            if stack == TOP_LIST:  # an object or list item just ended
                cut = index + 1
            elif not stack:  # the reply is whole: nothing to salvage
                return None
        elif char == "," and stack == TOP_LIST:  # after a number, true, false or null item
            cut = index
    if cut is None:
        return None
    return text[:cut].rstrip().rstrip(",") + "]}"


def _without_repeats(value: Any) -> tuple[Any, int, int]:
    """`value` with list items equal to an earlier item of the same list removed, recursively;
    (value, items kept, items dropped)."""
    if isinstance(value, dict):
        kept = dropped = 0
        out = {}
        for key, item in value.items():
            out[key], k, d = _without_repeats(item)
            kept, dropped = kept + k, dropped + d
        return out, kept, dropped
    if isinstance(value, list):
        seen: set[str] = set()
        out_list, kept, dropped = [], 0, 0
        for item in value:
            key = json.dumps(item, sort_keys=True, ensure_ascii=False)
            if key in seen:
                dropped += 1
                continue
            seen.add(key)
            cleaned, k, d = _without_repeats(item)
            out_list.append(cleaned)
            kept, dropped = kept + 1 + k, dropped + d
        return out_list, kept, dropped
    return value, 0, 0


def salvage_cut_reply(content: str, response_model: type[BaseModel]) -> Salvage | None:
    """The complete items of a cut reply as JSON the response model can read, or None when nothing
    was completed (or the model's required fields are not all lists)."""
    start = content.find("{")
    prefix = last_complete_item_prefix(content[start:]) if start >= 0 else None
    if prefix is None:
        return None
    try:
        data = json.loads(prefix)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    for name, field in response_model.model_fields.items():
        if name not in data:
            if getattr(field.annotation, "__origin__", None) is not list:
                return None  # a field the model never reached that an empty list cannot stand for
            data[name] = []
    data, _, repeats = _without_repeats(data)
    kept = sum(len(value) for value in data.values() if isinstance(value, list))
    if kept == 0:
        return None
    return Salvage(json.dumps(data, ensure_ascii=False), kept, repeats)


def closed_after_whitespace_loop(content: str) -> str | None:
    """A reply cut while it wrote only whitespace after a complete value, closed: its open objects
    and lists get their closing brackets. None when the cut came elsewhere (inside a string, after a
    comma or a colon) or the tail is not a whitespace loop."""
    body = content.rstrip()
    if len(content) - len(body) < WHITESPACE_LOOP or not body:
        return None
    stack: list[str] = []
    in_string = escaped = False
    for char in body:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            stack.append("}" if char == "{" else "]")
        elif char in "}]":
            if not stack:
                return None
            stack.pop()
    if in_string or not stack or body[-1] in ",:{[":
        return None
    return body + "".join(reversed(stack))
