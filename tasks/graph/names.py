"""Name handling shared by graph extraction and canonicalization: normalized names (the
identity of a raw entity), display forms, titles, and name-part parsing.

Pure functions only; English names are compared casefolded on word tokens, Chinese names
as written.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from schemas.ids import make_id
from tasks.text import CJK_CHAR

NAME_TOKEN = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*\.?")
_ARTICLE = re.compile(r"^(?:the|a|an|his|her|their|its|my|your|our)\s+", re.IGNORECASE)
_POSSESSIVE = re.compile(r"['’][sS]?$")  # NEIL'S as Neil's: the cue's capitals are no other name

# Titles carry gender evidence; a titled surname is resolved against full names by canonicalization.
MALE_TITLES = frozenset(
    {
        "mr",
        "mister",
        "sir",
        "lord",
        "king",
        "prince",
        "master",
        "monsieur",
        "herr",
        "senor",
        "father",
        "brother",
        "uncle",
    }
)
FEMALE_TITLES = frozenset(
    {
        "mrs",
        "ms",
        "miss",
        "madam",
        "madame",
        "lady",
        "queen",
        "princess",
        "mistress",
        "dame",
        "mother",
        "sister",
        "aunt",
        "granny",
    }
)
NEUTRAL_TITLES = frozenset(
    {
        "dr",
        "doctor",
        "prof",
        "professor",
        "captain",
        "capt",
        "officer",
        "detective",
        "sergeant",
        "sgt",
        "judge",
        "reverend",
        "rev",
        "saint",
        "st",
        "agent",
    }
)
TITLES = MALE_TITLES | FEMALE_TITLES | NEUTRAL_TITLES

# Chinese kinship and role nouns: "程勇爸爸" is a different person from "程勇".
ZH_RELATION_NOUNS = frozenset(
    """
爸爸 妈妈 爸 妈 父亲 母亲 老爸 老妈 前妻 前夫 妻子 老婆 丈夫
老公 媳妇 儿子 女儿 孩子 哥哥 姐姐 弟弟 妹妹 哥 姐 弟 妹
爷爷 奶奶 外婆 外公 姥姥 姥爷 叔叔 阿姨 舅舅 婶婶 孙子 孙女 女友 男友 女朋友 男朋友 同事 朋友 秘书 司机 助理
律师 老板 家人 岳父 岳母 小姨 姐夫 妹夫 嫂子 手下 保镖 师傅 徒弟 室友 邻居 未婚妻 未婚夫
""".split()
)
ZH_FAMILIAR_PREFIXES = ("老", "小", "阿")


def is_cjk(text: str) -> bool:
    return bool(CJK_CHAR.search(text))


@lru_cache(maxsize=1 << 16)  # pure, and asked for the same surfaces over and over while grounding
def clean_surface(surface: str) -> str:
    """A surface with outer punctuation and possessive removed, spaces collapsed (NFKC)."""
    text = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", surface)).strip()
    # Until nothing changes: each cut can bare another ("Neil's." -> "Neil's" -> "Neil"), and a name
    # cleaned twice must be the name cleaned once, or two spellings of it get two ids.
    previous = None
    while text != previous:
        previous = text
        text = text.strip(" \t\"'“”‘’()[]{}<>,;:!?*_~`-—–")
        if not is_cjk(text):
            text = _POSSESSIVE.sub("", text).rstrip()
        if not re.fullmatch(r"(?:[^\W\d_]\.){2,}", text):  # an initialism keeps its dots: "F.A."
            text = text.rstrip(".")
    return text


@lru_cache(maxsize=1 << 16)
def normalize_name(surface: str) -> str:
    """The identity of a name inside one type: casefolded tokens without a leading article."""
    text, previous = surface, None
    while text != previous:  # "THE 'THE 李": each cut can bare another article or quote
        previous, text = text, _ARTICLE.sub("", clean_surface(text))
    if is_cjk(text):
        name = re.sub(r"\s+", "", text)
    else:
        name = " ".join(t for t in (t.rstrip(".") for t in NAME_TOKEN.findall(text.casefold())) if t)
    # A fixpoint ("the the bar" is "bar"): ids are made from names normalized again, so a name must
    # normalize to itself or one entity gets two ids (or two entities one).
    return name if name == surface else normalize_name(name)


def own_aliases(aliases: list[str], name: str, listed_names: set[str]) -> list[str]:
    """The aliases of an extracted entity that are not the name of another entity of the same reply
    (`listed_names`, normalized): a small model lists a scene's other characters as aliases
    ("Anna": ["Anna Price", "Leo"]), and Leo would then be found as Anna."""
    own = normalize_name(name)
    return [a for a in aliases if normalize_name(a) == own or normalize_name(a) not in listed_names]


def display_name(surface: str) -> str:
    """A readable form: all-caps screenplay names in title case, articles dropped."""
    text = _ARTICLE.sub("", clean_surface(surface))
    if not is_cjk(text) and text.isupper():
        text = re.sub(r"[^\W_]+(?:['’][^\W_]+)*", lambda m: m.group(0).capitalize(), text.lower())
        text = re.sub(r"\bMc([a-z])", lambda m: "Mc" + m.group(1).upper(), text)
    return text


def raw_entity_id(doc_id: str, entity_type: str, name: str) -> str:
    """Raw entity id: one per (document, type, normalized name)."""
    return make_id("rent", doc_id, entity_type, normalize_name(name))


@dataclass(frozen=True)
class NameParts:
    """An English personal name split into title, given names and surname (lowercase)."""

    title: str | None
    tokens: tuple[str, ...]  # name tokens without the title

    @property
    def first(self) -> str | None:
        return self.tokens[0] if self.tokens else None

    @property
    def last(self) -> str | None:
        return self.tokens[-1] if self.tokens else None

    @property
    def is_full(self) -> bool:
        return len(self.tokens) >= 2

    @property
    def gender(self) -> str | None:
        if self.title in MALE_TITLES:
            return "m"
        if self.title in FEMALE_TITLES:
            return "f"
        return None


def name_parts(name: str) -> NameParts:
    """Title and tokens of a (normalized or display) English name."""
    tokens = normalize_name(name).split()
    title = None
    if len(tokens) >= 2 and tokens[0] in TITLES:
        title, tokens = tokens[0], tokens[1:]
    return NameParts(title, tuple(tokens))


def compact_description(parts: list[str], max_chars: int) -> str:
    """Distinct description parts joined in order, cut at a sentence or word boundary to `max_chars`."""
    seen: set[str] = set()
    kept: list[str] = []
    length = -1  # of " ".join(kept)
    for part in parts:
        text = re.sub(r"\s+", " ", part or "").strip()
        key = text.casefold()
        if text and key not in seen and not any(key in s for s in seen):
            seen.add(key)
            kept.append(text)
            length += len(text) + 1
            if length > max_chars:
                break  # the cut below reads only the first max_chars: later parts cannot change it
    joined = " ".join(kept)
    if len(joined) <= max_chars:
        return joined
    cut = joined[: max_chars - 1]
    boundary = max(cut.rfind(". "), cut.rfind("。"), cut.rfind("! "), cut.rfind("? "))
    if boundary >= max_chars // 2:
        return cut[: boundary + 1].rstrip()
    space = cut.rfind(" ")
    return (cut[:space] if space >= max_chars // 2 else cut).rstrip(" ,;:") + "…"
