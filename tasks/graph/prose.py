"""English prose -> entity lexicon: capitalised names by frequency, titled names, dialogue
attribution ("said the fisherman", "Nils said"), recurring role-like actors ("the giant",
"his wife") and settings ("in the forest", "to Rousay").
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

import pandas as pd

from tasks.graph.names import TITLES
from tasks.graph.screenplay import MONTHS_DAYS
from tasks.text import STOPWORDS_EN

SPEECH_VERBS = (
    "said|says|cried|asked|answered|replied|shouted|called|whispered|exclaimed|continued|screamed|"
    "spoke|returned|added|roared|sighed|laughed|murmured|begged|thought|wept|sobbed|groaned|growled"
)
_DET = r"(?:the|his|her|their|its|my|our|your|poor|old|little|good)"
_AFTER_QUOTE = r"[,!?.…—-]?[\"”’']\s*"  # an attribution that follows the quoted words
ATTR_ROLE_AFTER = re.compile(rf"{_AFTER_QUOTE}(?:{SPEECH_VERBS})\s+(?:{_DET}\s+)+(?P<noun>[a-z][a-z\-]+)\b")
ATTR_ROLE_BEFORE = re.compile(rf"\b(?:{_DET}\s+)+(?P<noun>[a-z][a-z\-]+)\s+(?:{SPEECH_VERBS})\b")
_NAME = r"[A-Z][a-z'’]+(?:[ \t]+[A-Z][a-z'’]+){0,2}"
ATTR_NAME_AFTER = re.compile(rf"{_AFTER_QUOTE}(?:{SPEECH_VERBS})\s+(?P<name>{_NAME})")
ATTR_NAME_BEFORE = re.compile(rf"(?P<name>{_NAME})\s+(?:{SPEECH_VERBS})\b")
CAPITALISED = re.compile(rf"(?<![\w'’])(?P<name>{_NAME})(?![\w'’])")
TITLED = re.compile(
    r"\b(?P<title>Mr|Mrs|Ms|Miss|Dr|King|Queen|Prince|Princess|Lord|Lady|Sir|Saint|Father|Mother|"
    r"Captain|Brother|Sister|Uncle|Aunt)\.?[ \t]+(?P<name>[A-Z][a-z'’]+)"
)
THE_CAPITAL = re.compile(r"\b(?:the|The)[ \t]+(?P<noun>[A-Z][a-z]+)\b(?![ \t]+[A-Z])")
_PLACE_PREP = (
    r"(?:in|on|at|to|into|from|near|towards|toward|through|across|inside|outside|under|behind|round|around|"
    r"beside|along|upon|reached|entered|left)"
)
PLACE_NOUN_PHRASE = re.compile(
    rf"\b{_PLACE_PREP}\s+(?:the|a|an|his|her|their|its|our|my)\s+(?:[a-z\-]+\s+)?(?P<noun>[a-z]+)\b"
)
PLACE_BEFORE = re.compile(
    rf"(?:\b{_PLACE_PREP}\s+(?:the\s+)?(?:[a-z]+\s+)?|\b(?:land|village|town|city|kingdom|country|"
    rf"island|isle|parish|county|province|shore)\s+of\s+)$",
    re.IGNORECASE,
)
PLACE_WORDS = frozenset(
    "lake mount mountain river forest castle isle island bay cape port fort sea valley".split()
)
PLACE_NOUNS = frozenset(
    """
sea shore beach coast hovel hut cottage house castle palace forest wood woods village town city church garden
mountain mountains hill hills river lake valley field fields meadow kitchen room chamber hall cave well island
market farm mill tower road path bridge court kingdom country land cellar barn stable inn prairie plain
wilderness desert harbour harbor ship boat school yard courtyard graveyard dungeon lodge tent kailyard
""".split()
)
PERSON_NOUNS = frozenset(
    """
king queen prince princess fisherman wife husband man woman boy girl giant troll witch fairy dwarf dog cat fox
wolf bear mouse bird father mother son daughter brother sister widow squire farmer miller soldier beggar
peasant servant maid shepherd hunter knight ogre dragon child stranger merchant tailor cook priest monk
emperor empress duke lord lady count countess flounder charcoal-burner old-woman giantess hero heroine
youth lad lass maiden master mistress keeper thief robber baker smith page nurse grandmother grandfather
""".split()
)
_NOT_ROLES = frozenset(
    """other one voice first second last latter former same two three rest others thing way
the his her their its my our your poor old little good""".split()
)
_NOT_NAMES = frozenset(
    """
i oh ah yes no well now then but and so if when what why how who where there here this that these those
the a an he she it they we you his her their my our your once one god lord heaven heavens alas o sir madam
""".split()
)


@dataclass
class ProseLexicon:
    names: Counter = field(default_factory=Counter)  # display name -> mid-sentence count
    types: dict[str, str] = field(default_factory=dict)  # display name -> entity type
    roles: Counter = field(default_factory=Counter)  # role noun -> occurrences as an actor
    places: Counter = field(default_factory=Counter)  # place noun -> occurrences after a preposition
    attributions: list[tuple[int, int, str]] = field(
        default_factory=list
    )  # (start, end, name or role) of speech
    appositions: list[tuple[str, str, int, int]] = field(default_factory=list)  # (role, name, start, end)


def sentence_starts(sentences: pd.DataFrame, text: str) -> set[int]:
    """Positions where a sentence's first word starts (after opening quotes)."""
    starts = set()
    for start in sentences["char_start"].tolist():
        position = int(start)
        while position < len(text) and text[position] in "\"'“‘([ ":
            position += 1
        starts.add(position)
    return starts


def read_prose(text: str, sentences: pd.DataFrame, min_count: int) -> ProseLexicon:
    """Names, role-like actors and settings of a prose text, by pattern and frequency."""
    lexicon = ProseLexicon()
    initial = sentence_starts(sentences, text)
    after_quote = {m.end() for m in re.finditer(r"[\"”’]\s*", text)}
    mid_counts: Counter = Counter()
    all_counts: Counter = Counter()
    for match in CAPITALISED.finditer(text):
        name = _trim_name(match.group("name"))
        if not name:
            continue
        all_counts[name] += 1
        if match.start() not in initial and match.start() not in after_quote:
            mid_counts[name] += 1
    attributed: Counter = Counter()
    for pattern in (ATTR_NAME_AFTER, ATTR_NAME_BEFORE):
        for match in pattern.finditer(text):
            name = _trim_name(match.group("name"))
            if name:
                attributed[name] += 1
                lexicon.attributions.append((match.start(), match.end(), name))
    for match in TITLED.finditer(text):
        mid_counts[f"{match.group('title')} {match.group('name')}"] += 1
    place_context = _place_contexts(text, mid_counts)
    for name, count in mid_counts.items():
        if count + attributed[name] >= min_count and (count >= 1 or attributed[name] >= 1):
            lexicon.names[name] = all_counts[name] or count
            words = name.lower().rstrip(".").split()
            if words[0] in TITLES or attributed[name]:
                kind = "character"
            elif set(words) & PLACE_WORDS or place_context[name] * 2 > count:
                kind = "location"
            else:
                kind = "character"
            lexicon.types[name] = kind
    _read_roles(text, lexicon, min_count)
    for match in PLACE_NOUN_PHRASE.finditer(text):
        noun = match.group("noun")
        if noun in PLACE_NOUNS and noun not in lexicon.roles:
            lexicon.places[noun] += 1
    lexicon.places = Counter({n: c for n, c in lexicon.places.items() if c >= min_count})
    _read_appositions(text, lexicon)
    return lexicon


def _trim_name(name: str) -> str | None:
    words = name.split()
    while words and (words[0].lower() in _NOT_NAMES or words[0].lower() in STOPWORDS_EN):
        words = words[1:]
    while words and words[-1].lower() in STOPWORDS_EN:
        words = words[:-1]
    if not words or any(w.lower() in MONTHS_DAYS for w in words):
        return None
    return re.sub(r"['’]s?$", "", " ".join(words))


def _place_contexts(text: str, names: Counter) -> Counter:
    contexts: Counter = Counter()
    for name in names:
        for match in re.finditer(rf"(?<![\w'’]){re.escape(name)}(?![\w'’])", text):
            possessive = text[match.end() : match.end() + 2] in ("'s", "’s")  # "in the Giant's garden"
            if not possessive and PLACE_BEFORE.search(text[max(0, match.start() - 30) : match.start()]):
                contexts[name] += 1
    return contexts


def _read_roles(text: str, lexicon: ProseLexicon, min_count: int) -> None:
    speaking: Counter = Counter()
    for pattern in (ATTR_ROLE_AFTER, ATTR_ROLE_BEFORE):
        for match in pattern.finditer(text):
            noun = match.group("noun")
            if noun in _NOT_ROLES or noun in STOPWORDS_EN or noun in PLACE_NOUNS:
                continue
            speaking[noun] += 1
            lexicon.attributions.append((match.start(), match.end(), noun))
    definite = Counter(
        m.group(1).lower() for m in re.finditer(r"\b(?:the|his|her|my|their)\s+([a-z][a-z\-]+)\b", text)
    )
    # "the strange woman", "the tall woman": a recurring person noun behind one adjective counts too.
    definite.update(
        m.group(1)
        for m in re.finditer(r"\b(?:the|his|her|my|their)\s+[a-z]+\s+([a-z][a-z\-]+)\b", text)
        if _is_person_noun(m.group(1))
    )
    capital_roles = Counter(m.group("noun").lower() for m in THE_CAPITAL.finditer(text))
    people = {n for n in set(definite) | set(capital_roles) if _is_person_noun(n)}
    for noun in set(speaking) | people:
        occurrences = definite[noun] + capital_roles[noun]
        if (speaking[noun] and occurrences >= min_count) or (noun in people and occurrences >= 2 * min_count):
            if noun.capitalize() not in lexicon.names:
                lexicon.roles[noun] = occurrences


def _is_person_noun(noun: str) -> bool:
    """'giant', 'troll-woman', 'charcoal-burner': a noun (or hyphenated compound) for a person or animal."""
    return noun in PERSON_NOUNS or noun.rsplit("-", 1)[-1] in PERSON_NOUNS


def _read_appositions(text: str, lexicon: ProseLexicon) -> None:
    """'my good wife Ilsebill', 'a charcoal-burner named Nils': a role noun naming a named character."""
    names = [n for n, t in lexicon.types.items() if t == "character"]
    if not names or not lexicon.roles:
        return
    roles = "|".join(re.escape(r) for r in sorted(lexicon.roles, key=len, reverse=True))
    people = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    pattern = re.compile(rf"\b(?P<role>{roles})(?:,)?\s+(?:(?:named|called)\s+)?(?P<name>{people})(?![\w'’])")
    for match in pattern.finditer(text):
        lexicon.appositions.append((match.group("role"), match.group("name"), match.start(), match.end()))


def attribution_turns(lexicon: ProseLexicon) -> list[tuple[int, int, str]]:
    """Speech attributions in text order, one per position."""
    seen: dict[int, tuple[int, int, str]] = {}
    for start, end, who in sorted(lexicon.attributions):
        seen.setdefault(start, (start, end, who))
    return list(seen.values())
