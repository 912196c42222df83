"""English screenplay structure -> entity lexicon: speakers from character cues, character
introductions and CAPITALISED props in action lines, full names, titled names, vocatives,
and scene locations and times from headings.

The lexicon is then grounded over the chunks by `graph_heuristics`; nothing here touches ids.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache

from tasks.graph.names import display_name, is_cjk, normalize_name
from tasks.graph.upsert import EntityKey, GraphDraft
from tasks.ingest.screenplay import Block
from tasks.text import STOPWORDS_EN

_SUFFIX = re.compile(
    r"[\s(]+(?:V\.?\s?O\.?|O\.?\s?S\.?|O\.?\s?C\.?|CONT['’]?D\.?|CONTINUED|CONT\.?|PRE-?LAP|FILTERED)\)?$",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^(?:OC|O\.C\.|OS|O\.S\.|VO|V\.O\.)\s+")
_NOT_SPEAKER_WORDS = frozenset(
    """
credits end subtitle subtitles title titles card super insert montage begins ends intercut flashback pov p.o.v
continued transition scene fade cut dissolve series black back
""".split()
)
_PLACE_PREPOSITIONS = frozenset("at in on into from to inside outside near under over with back".split())
COLLECTIVE_EN = frozenset(
    "all both crowd everyone everybody others together group fans voices crowds chorus".split()
)
# Speaker labels that name a role rather than a person: matched only when written in capitals.
ROLE_WORDS = frozenset(
    """
woman man girl boy kid guy fan waitress waiter cashier collector police policeman policewoman official trainer
sergeant voice singer bystander colleague exec executive doctor nurse driver officer manager announcer
announcement radio clerk guard receptionist bartender barman customer reporter stranger passenger attendant
skipper captain secretary lawyer priest teacher student host hostess operator machine narrator
""".split()
)
CAPS_PHRASE = re.compile(r"(?<![\w'’])([A-Z][A-Z'’\-.]*[A-Z](?:[ \t]+[A-Z][A-Z'’\-.]*[A-Z])*)(?![\w'’])")
AGE_PAREN = re.compile(r"^\s*\((?P<age>[^)]{1,20})\)")
_AGE_WORD = re.compile(
    r"\d|teen|twent|thirt|fort|fift|sixt|sevent|eight|ninet|late|early|mid|young|old|age", re.I
)
ROLE_PHRASE = re.compile(
    r"^\s*(?:\([^)]{1,20}\))?\s*,\s*(?:the|a|an|his|her|their)\s+(?P<role>[^,.;:()]{3,60})"
)
_DETERMINER_BEFORE = re.compile(
    r"\b(?i:a|an|the|his|her|their|its|my|your|our|this|that|some|one)\s+(?:[a-z][\w'’\-]*\s+){0,2}$"
)
_INSTITUTION_WORDS = frozenset(
    """
trust bank police company corporation council hospital school university church army navy court agency
department ministry bureau committee society foundation institute union party government coastguard
""".split()
)
_NOT_OBJECTS = frozenset(
    """
cut to fade in out pov close on angle int ext v.o o.s o.c cont'd insert super title montage back scene
sfx fx later continuous day night we see series of shots intercut end beat smash match dissolve
""".split()
)
TITLED_NAME = re.compile(r"\b(?P<title>Mr|Mrs|Ms|Miss|Dr|Mister)\.?[ \t]+(?P<name>[A-Z][a-zA-Z'’\-]+)")
WEEKDAY_TIME = re.compile(
    r"\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
    r"(?:[ \t]+(?:morning|afternoon|evening|night))?\b"
)
MONTHS_DAYS = frozenset(
    """
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december christmas easter
""".split()
)
_INTERJECTIONS = frozenset(
    """
yes no well oh okay ok hey look listen please thanks thank sorry wait come good right what why how who where
when now then so god jesus christ man dude guys honey baby sweetheart darling dear sir madam mom dad mum
hello hi bye goodbye great fine sure alright anyway really shit fuck damn hell whatever exactly maybe never
nothing uh um er ah ha hmm huh yeah yep nope shh stop go stay here there you me everyone everybody nobody
actually meantime meanwhile granted jeez gee basically honestly seriously besides however also still plus
instead otherwise first second finally again cool whoa wow boy brother buddy pal sweetie folks ladies
gentlemen people remember trust believe wait sorry thanks look listen see
""".split()
)
_NON_SCENE_TIMES = frozenset({"CONTINUOUS", "LATER", "SAME TIME", "MOMENTS LATER", "MAGIC HOUR"})


def normalize_cue(speaker: str, title: str = "") -> str | None:
    """The speaker a cue names, without extensions, or None when the cue is not a speaker."""
    name = re.sub(r"\([^)]*\)", " ", speaker).replace("^", " ").strip()
    for _ in range(3):
        name = _PREFIX.sub("", _SUFFIX.sub("", name)).strip(" .:-")
    name = " ".join(name.split())
    letters = [c for c in name if c.isalpha()]
    words = name.lower().replace(".", " ").split()
    if len(letters) < 2 or "P.O.V" in name.upper() or not words:
        return None
    if words[0] in _PLACE_PREPOSITIONS or _NOT_SPEAKER_WORDS & set(words):
        return None
    if title and normalize_name(name) == normalize_name(title):
        return None  # the title card repeated in capitals
    return name


@dataclass
class ScreenplayLexicon:
    """What the screenplay's structure says exists, before grounding."""

    speakers: Counter = field(default_factory=Counter)  # normalized cue -> number of cues
    proper: dict[str, bool] = field(default_factory=dict)  # speaker -> written as a proper name in the text
    full_names: dict[str, str] = field(default_factory=dict)  # normalized full name -> display
    intros: dict[str, str] = field(default_factory=dict)  # normalized name -> introduction sentence
    roles: dict[str, tuple[str, str, int]] = field(
        default_factory=dict
    )  # character -> (role, evidence, position)
    things: dict[tuple[str, str], str] = field(default_factory=dict)  # (type, display) -> evidence

    @property
    def spoken(self) -> set[str]:
        """Normalized names of the speakers."""
        return {normalize_name(s) for s in self.speakers}


def written_as_proper(text: str, name: str) -> bool:
    """A name is proper when it is never (or rarely) written in lower case, counting only
    mid-sentence capitals: "Actually," at the start of a line proves nothing."""
    if name.split()[-1].lower() in ROLE_WORDS:
        return False
    lower = upper_mid = 0
    for start in _occurrences(text, name):
        surface = text[start : start + len(name)]
        if surface.islower():
            lower += 1
        elif surface[0].isupper() and re.search(r"[a-z,;]\s*$", text[max(0, start - 3) : start]):
            upper_mid += 1
    return lower == 0 or lower <= upper_mid // 3


# Characters that match an ASCII letter under re.IGNORECASE without being its lower or upper case
# (dotless i, long s, Kelvin sign), and one whose lower case is two characters.
_FOLDS_TO_ASCII = re.compile("[\u0130\u0131\u017f\u212a]")


@lru_cache(maxsize=4)
def _lowered(text: str) -> tuple[str, bool]:
    """The text in lower case, and whether str.find in it gives the regular expression's matches
    (once per document: every speaker's name is looked up in the same text)."""
    return text.lower(), not _FOLDS_TO_ASCII.search(text)


def _occurrences(text: str, name: str) -> list[int]:
    """Starts of `(?<![\\w'’])name(?![\\w])` matches of `name` in `text`, case-insensitive, left to
    right without overlap (as re.finditer finds them). An ASCII name is found with str.find in the
    lowercased text (the same matches when no character of the text case-folds into ASCII
    otherwise); any other name with the regular expression."""
    lowered, plain = _lowered(text)
    if not name.isascii() or not plain:
        pattern = re.compile(rf"(?<![\w'’])({re.escape(name)})(?![\w])", re.IGNORECASE)
        return [match.start() for match in pattern.finditer(text)]
    needle, size = name.lower(), len(name)
    starts: list[int] = []
    at = lowered.find(needle)
    while at >= 0:
        before = text[at - 1] if at > 0 else ""
        after = text[at + size] if at + size < len(text) else ""
        if (not before or not (_word(before) or before in "'’")) and (not after or not _word(after)):
            starts.append(at)
            at = lowered.find(needle, at + size)
        else:
            at = lowered.find(needle, at + 1)
    return starts


def _word(char: str) -> bool:
    return char.isalnum() or char == "_"


def read_speakers(blocks: list[Block], title: str) -> tuple[Counter, dict[int, str]]:
    """Normalized speakers with cue counts, and the normalized speaker of every cue block (by start)."""
    speakers: Counter = Counter()
    by_block: dict[int, str] = {}
    for block, following in zip(blocks, blocks[1:] + [None]):
        if block.kind != "cue" or following is None or following.kind not in ("dialogue", "parenthetical"):
            continue
        name = normalize_cue(block.speaker or "", title)
        if name:
            speakers[name] += 1
            by_block[block.start] = name
    return speakers, by_block


def scan_action(
    text: str, block: Block, lexicon: ScreenplayLexicon, first_names: set[str], spoken: set[str]
) -> None:
    """Introductions, full names, institutions and props written in capitals in one action block."""
    body = text[block.start : block.end]
    for match in CAPS_PHRASE.finditer(body):
        phrase = match.group(1).strip(" .-")
        key = normalize_name(phrase)
        words = key.split()
        if not key or len(key.replace(" ", "")) < 2 or set(words) & _NOT_OBJECTS or key in spoken:
            continue
        after = body[match.end() :]
        sentence = _sentence_around(body, match.start(), match.end())
        if words[0] in first_names and 2 <= len(words) <= 3 and not set(words[1:]) & STOPWORDS_EN:
            lexicon.full_names.setdefault(key, display_name(phrase))
            _maybe_intro(lexicon, key, after, sentence, block.start + match.start())
        elif (age := AGE_PAREN.match(after)) and _AGE_WORD.search(age.group("age")) and len(words) <= 4:
            if len(words) > 1:
                lexicon.full_names.setdefault(key, display_name(phrase))
            lexicon.things.setdefault(("character", display_name(phrase)), sentence)
            _maybe_intro(lexicon, key, after, sentence, block.start + match.start())
        elif set(words) & _INSTITUTION_WORDS:
            lexicon.things.setdefault(("institution", display_name(phrase)), sentence)
        elif _DETERMINER_BEFORE.search(body[: match.start()]) and not _looks_like_verb(body, match, words):
            lexicon.things.setdefault(("object", phrase.lower()), sentence)


def _looks_like_verb(body: str, match: re.Match[str], words: list[str]) -> bool:
    # "the door BANGS": a single capitalised -S/-ED word right after a lower-case noun is a sound cue.
    if len(words) != 1 or not words[0].endswith(("s", "ed", "ing")):
        return False
    return bool(re.search(r"[a-z]\s+$", body[: match.start()])) and not re.search(
        r"\b(?:a|an|the)\s+$", body[: match.start()]
    )


def _maybe_intro(lexicon: ScreenplayLexicon, key: str, after: str, sentence: str, position: int) -> None:
    lexicon.intros.setdefault(key, sentence)
    role = ROLE_PHRASE.match(after)
    if role:
        lexicon.roles.setdefault(key, (_role_head(role.group("role")), sentence, position))


def _role_head(phrase: str) -> str:
    """'sharp-eyed assistant and a coastguard volunteer' -> 'assistant'; 'lighthouse keeper' stays."""
    head = re.split(r"\s+(?:and|with|in|who|from|of|at|on|wearing)\s+", phrase.strip(), maxsplit=1)[0]
    words = head.lower().split()
    if (
        len(words) >= 2
        and not re.search(r"(?:ed|y|ful|ous|ish|ive|-\w+)$", words[-2])
        and words[-2] not in _ADJECTIVES
    ):
        return " ".join(words[-2:])
    return words[-1] if words else phrase


_ADJECTIVES = frozenset(
    """
old young broad tall short big small little heavy thin fat pretty beautiful handsome local new former
quiet loud gentle kind cruel poor rich famous nervous tough
""".split()
)


def _sentence_around(body: str, start: int, end: int) -> str:
    left = max(body.rfind(". ", 0, start), body.rfind("\n\n", 0, start))
    right_candidates = [i for i in (body.find(". ", end), body.find("\n\n", end)) if i >= 0]
    right = min(right_candidates) + 1 if right_candidates else len(body)
    return " ".join(body[left + 1 if left >= 0 else 0 : right].split())


def find_full_names(text: str, first_names: set[str]) -> dict[str, str]:
    """'Holden McNeil', 'Banky Edwards': a known first name followed on the same line by a surname."""
    if not first_names:
        return {}
    alternatives = "|".join(re.escape(n) for n in sorted(first_names, key=len, reverse=True))
    surname = r"[A-Z][a-z]+(?:[A-Z][a-z]+)?|Mc[A-Z][a-z]+|[A-Z]{2,}"
    pattern = re.compile(rf"(?<![\w'’])({alternatives})[ \t]+({surname})(?![\w'’])", re.IGNORECASE)
    found: dict[str, str] = {}
    for match in pattern.finditer(text):
        first, last = match.group(1), match.group(2)
        if not first[0].isupper() or not last[0].isupper() or last.lower() in STOPWORDS_EN:
            continue
        if last.lower() in MONTHS_DAYS or last.lower() in first_names or last.lower() in _INTERJECTIONS:
            continue
        if (
            last.lower().endswith(("ing", "ed", "ly"))
            or first.isupper() != last.isupper()
            or not written_as_proper(text, last)
        ):
            continue
        found.setdefault(normalize_name(f"{first} {last}"), display_name(f"{first} {last}"))
    return found


def find_vocatives(dialogue: list[str], text: str, known: set[str]) -> Counter:
    """Capitalised words used to address someone ('Maggie, listen'), not otherwise known."""
    counts: Counter = Counter()
    for sentence in dialogue:
        # "Maggie, listen" / "Maggie... it's gone" / "Need a lift, Nia?"; a lone "Promise?" proves nothing.
        for match in re.finditer(
            r"^([A-Z][a-z]{2,})(?=,\s+\w|\.\.\.|…)|,\s+([A-Z][a-z]{2,})(?=[.!?]$)", sentence
        ):
            word = match.group(1) or match.group(2)
            lower = word.lower()
            if (
                lower in known
                or lower in STOPWORDS_EN
                or lower in _INTERJECTIONS
                or lower in MONTHS_DAYS
                or lower.endswith("ly")
            ):
                continue
            counts[word] += 1
    return Counter(
        {
            w: n
            for w, n in counts.items()
            if n >= 2 and written_as_proper(text, w) and not _used_as_place(text, w)
        }
    )


def _used_as_place(text: str, word: str) -> bool:
    return bool(re.search(rf"\b(?:in|to|from|at|near|outside|into)\s+{re.escape(word)}\b", text))


def add_heading_entities(
    draft: GraphDraft, heading: str, heading_start: int, location: str | None, time_of_day: str | None
) -> tuple[EntityKey | None, list[tuple[int, int, EntityKey]]]:
    """Location and time entities of one scene heading, with their spans in the heading line."""
    spans: list[tuple[int, int, EntityKey]] = []
    location_key = None
    location = re.sub(r"\s*\([^)]*\)?", "", location).strip(" -") if isinstance(location, str) else None
    time_of_day = time_of_day if isinstance(time_of_day, str) else None
    if location:
        description = f"场景地点：{location}。" if is_cjk(location) else f"Scene location: {location}."
        location_key = draft.add_entity("location", location, description, "heuristic:heading")
        offset = heading.find(location)
        if location_key and offset >= 0:
            spans.append((heading_start + offset, heading_start + offset + len(location), location_key))
    if time_of_day and time_of_day.upper() not in _NON_SCENE_TIMES:
        time_key = draft.add_entity(
            "time", time_of_day, f"Time of day in scene headings: {time_of_day}.", "heuristic:heading"
        )
        offset = heading.upper().rfind(time_of_day.upper())
        if time_key and offset >= 0:
            spans.append((heading_start + offset, heading_start + offset + len(time_of_day), time_key))
    return location_key, spans
