"""Language-aware text primitives shared by segmentation, indexing and answering."""

from __future__ import annotations

import re
from functools import lru_cache

# Chinese numerals: digit values and the units that multiply them (scene numbers, 第十二场).
ZH_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
ZH_UNITS = {"十": 10, "百": 100, "千": 1000}


def zh_number(text: str) -> int | None:
    """The value of a Chinese numeral up to the thousands ("十二" 12, "一百零五" 105), or of digits."""
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

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
CJK_CHAR = re.compile(f"[{_CJK}]")
# A token is a CJK character, a run of letters/digits (apostrophes inside words kept), or a symbol.
TOKEN = re.compile(f"[{_CJK}]|[^\\W_]+(?:['’][^\\W_]+)*|[^\\w\\s]", re.UNICODE)
WORD = re.compile(f"[{_CJK}]|[^\\W_]+(?:['’][^\\W_]+)*", re.UNICODE)

STOPWORDS_EN = frozenset(
    """
a an the and or but if then else of to in on at by for with from into onto over under about as is are was
were be been being am do does did doing have has had having it its it's this that these those there here
he she him her his hers they them their theirs we us our ours you your yours i me my mine what which who
whom whose when where why how not no nor so than too very can could should would will shall may might must
just also only own same such both each few more most other some any all up down out off again further once
s t don't didn't doesn't isn't wasn't aren't weren't won't can't couldn't shouldn't wouldn't o ll d re ve
""".split()
)

STOPWORDS_ZH = frozenset(
    "的 了 是 在 和 与 也 就 都 而 及 着 或 一个 这 那 之 其 把 被 让 给 "
    "吗 呢 吧 啊 么 什么 怎么 为什么 哪 谁".split()
)


def detect_language(text: str, sample: int = 20000) -> str:
    """'zh' when CJK characters make up a large share of the letters, else 'en'."""
    head = text[:sample]
    cjk = len(CJK_CHAR.findall(head))
    latin = len(re.findall(r"[A-Za-z]", head))
    return "zh" if cjk > 0 and cjk >= 0.3 * (cjk + latin / 4) else "en"


@lru_cache(maxsize=16384)
def count_tokens(text: str) -> int:
    """Approximate LLM tokens: words, symbols and single CJK characters."""
    return len(TOKEN.findall(text))


def count_words(text: str, language: str) -> int:
    """The benchmark length unit: whitespace words (en) or non-whitespace characters (zh)."""
    if language == "zh":
        return len(re.sub(r"\s+", "", text))
    return len(text.split())


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    # A light suffix stripper: enough to let "walks"/"walked"/"walking" meet "walk" in BM25.
    if len(word) <= 3:
        return word
    if word.endswith(("ies", "ied")) and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("ing") and len(word) >= 6:
        return word[:-3]
    if word.endswith("ed") and len(word) >= 5:
        return word[:-2]
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def index_terms(text: str, language: str) -> list[str]:
    """Terms for the BM25 index: stemmed non-stopword words (en); characters and bigrams (zh)."""
    return list(_cached_terms(text, language))


@lru_cache(maxsize=16384)
def _cached_terms(text: str, language: str) -> tuple[str, ...]:
    """Query time reads the same sentences and questions again and again: tokenise each once."""
    if language == "zh" or CJK_CHAR.search(text):
        return tuple(_zh_terms(text))
    return tuple(_stem(w) for w in (m.lower() for m in WORD.findall(text)) if w not in STOPWORDS_EN)


def _zh_terms(text: str) -> list[str]:
    terms: list[str] = []
    for run in re.findall(f"[{_CJK}]+|[A-Za-z0-9]+", text):
        if CJK_CHAR.match(run):
            chars = [c for c in run]
            terms.extend(c for c in chars if c not in STOPWORDS_ZH)
            terms.extend(a + b for a, b in zip(chars, chars[1:]))
        else:
            word = run.lower()
            if word not in STOPWORDS_EN:
                terms.append(_stem(word))
    return terms


def content_words(text: str) -> set[str]:
    """Distinct index terms: the unit of lexical overlap between question, options and evidence."""
    return set(_cached_terms(text, "en"))


def normalize_text(text: str) -> str:
    """Unify line endings and drop a BOM; everything else is kept exactly as written."""
    return text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")


def normalize_space(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
