"""The claim a multiple-choice option needs: the question turned into a statement with the option
in its answer slot ("Why did X leave?" + "He was tired" -> "X left because he was tired.").

English questions are un-inverted with a small verb lexicon (no parser): the auxiliary is
removed, the main verb takes its tense, and the option goes where the wh-word's slot is. Shapes
the rules do not recognise fall back to "<question stem>: <option>". Chinese questions replace the
question word with the option, or append the option to the stem.
"""

from __future__ import annotations

import re

from tasks.query.options.verbs import is_verb, past, third_person
from tasks.text import CJK_CHAR, STOPWORDS_EN

DO_AUX = {"did": "past", "does": "present", "do": "plain"}
OTHER_AUX = frozenset("is was are were has have had can could will would should might may must".split())
NEGATED_AUX = {
    "didn't": "did",
    "doesn't": "does",
    "don't": "do",
    "wasn't": "was",
    "weren't": "were",
    "isn't": "is",
    "aren't": "are",
    "hasn't": "has",
    "haven't": "have",
    "hadn't": "had",
    "couldn't": "could",
    "can't": "can",
    "won't": "will",
    "wouldn't": "would",
    "shouldn't": "should",
}
NUMBER_WORDS = frozenset(
    """one two three four five six seven eight nine ten eleven twelve twenty hundred once twice half
several""".split()
)
PRONOUNS = frozenset("he she they it we i you someone everyone people".split())
DETERMINERS = frozenset(
    "the a an his her their its this that these those my our your some many most all each every".split()
)
PREPOSITIONS = (
    "in ",
    "at ",
    "on ",
    "into ",
    "inside ",
    "near ",
    "under ",
    "behind ",
    "by ",
    "from ",
    "to ",
    "over ",
    "outside ",
)
SUBORDINATORS = frozenset(
    "when after before while upon as because if once until during since whenever".split()
)
TIME_STARTS = (
    "after ",
    "before ",
    "when ",
    "while ",
    "during ",
    "at ",
    "in ",
    "on ",
    "once ",
    "until ",
    "by ",
)
WH_LEAD = re.compile(r"\b(why|how|who|whom|whose|where|when|what|which)\b", re.IGNORECASE)
ZH_WH = re.compile(
    r"为什么|为何|什么时候|何时|什么地方|哪里|哪儿|谁|什么|哪一个|哪个|哪位|哪一|怎样|如何|怎么"
)


def _subject_end(words: list[str]) -> int:
    """Index of the first predicate word after a subject that starts at words[0] (>= 1 when possible)."""
    if not words:
        return 0
    first = words[0].lower()
    if first in PRONOUNS:
        return 1
    for index in range(1, len(words)):
        if is_verb(words[index]) and words[index][:1].islower():
            return index
    # No known verb: a name run, a possessive chain, or a determiner with its noun.
    index = 1
    while index < len(words) and (
        words[index][:1].isupper() or words[index - 1].lower().endswith(("'s", "’s"))
    ):
        index += 1
    if first in DETERMINERS and index == 1 and len(words) > 2:
        index = 2
    return min(index, len(words))


def _lower_first(text: str) -> str:
    """Lower-case the option's first word when it is a function word, number or verb form, never a name."""
    first = text.split(" ", 1)[0]
    word = first.lower().strip(",;:")
    if first == "I" or (len(first) > 1 and first[1:].lower() != first[1:]):
        return text  # "I", acronyms and CamelCase names keep their case
    common = (
        word in PRONOUNS
        or word in DETERMINERS
        or word in STOPWORDS_EN
        or word in NUMBER_WORDS
        or is_verb(word)
    )
    return text[:1].lower() + text[1:] if common else text


def _is_clause(option: str) -> bool:
    """Whether an option is a full clause ("He was tired") rather than a phrase ("the forest")."""
    words = option.lower().split()
    return bool(words) and (
        words[0] in PRONOUNS
        or (len(words) > 1 and (words[1] in OTHER_AUX or words[1] in NEGATED_AUX or words[1].endswith("ed")))
    )


def _capitalize(text: str) -> str:
    return text[:1].upper() + text[1:]


def _finish(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(" ?.")
    return _capitalize(text) + "."


def _unfold(aux: str, rest: list[str]) -> tuple[str, str, str] | None:
    """(subject, verb phrase, tail) of an inverted question body after its auxiliary."""
    negated = aux.lower() in NEGATED_AUX
    base_aux = NEGATED_AUX.get(aux.lower(), aux.lower())
    end = _subject_end(rest)
    if end == 0 or end > len(rest):
        return None
    subject, predicate = " ".join(rest[:end]), rest[end:]
    if base_aux in DO_AUX:
        if not predicate:
            return None
        verb, tail = predicate[0].lower(), " ".join(predicate[1:])
        if negated:
            return subject, f"{base_aux} not {verb}", tail
        tense = DO_AUX[base_aux]
        inflected = past(verb) if tense == "past" else third_person(verb) if tense == "present" else verb
        return subject, inflected, tail
    return subject, f"{base_aux} not" if negated else base_aux, " ".join(predicate)


def _join_reason(clause: str, option: str) -> str:
    lowered = option.lower()
    if lowered.startswith(("because", "since", "so ", "so that", "in order", "to ", "due to", "for ")):
        return f"{clause} {_lower_first(option)}"
    if lowered.endswith("ing") or re.match(r"^\w+ing\b", lowered):
        return f"{clause} because of {_lower_first(option)}"
    return f"{clause} because {_lower_first(option)}"


def _is_aux(word: str) -> bool:
    w = word.lower()
    return w in DO_AUX or w in OTHER_AUX or w in NEGATED_AUX


def _yes_no_claim(words: list[str], option: str) -> str | None:
    """'Did X leave?' + 'No' -> 'X did not leave.'; other options follow the statement after a colon."""
    answer = option.lower()
    negative = answer in ("no", "false")
    aux = words[0].lower()
    if negative and aux not in NEGATED_AUX:
        aux = next((neg for neg, base in NEGATED_AUX.items() if base == aux), aux)
    parts = _unfold(aux, words[1:])
    if parts is None:
        return None
    subject, verb, tail = parts
    statement = f"{subject} {verb}" + (f" {tail}" if tail else "")
    return _finish(statement if answer in ("yes", "no", "true", "false") else f"{statement}: {option}")


def _wh_body(wh: str, words: list[str]) -> tuple[str, list[str]]:
    """Drop the rest of the wh-phrase ("how many times", "what item on board the ship",
    "which of the following")."""
    if wh == "how" and words and words[0].lower() in ("many", "much", "long", "old", "far", "often"):
        wh, words = "how-many", words[1:]
    elif wh not in ("what", "which", "whose"):
        return wh, words
    lowered = [w.lower() for w in words[:3]]
    if lowered == ["of", "the", "following"] or lowered[:2] == ["of", "following"]:
        words = words[3:] if lowered[1] == "the" else words[2:]
    for index, word in enumerate(words[:7]):
        if _is_aux(word) or is_verb(word):  # the wh-phrase ends where the predicate starts
            return wh, words[index:]
    return wh, words


def _english_claim(question: str, option: str) -> str:
    raw = re.sub(r"\s+", " ", question).strip()
    option = option.strip().rstrip(".")
    if not raw.endswith("?") and not WH_LEAD.match(raw):
        return _finish(f"{raw} {option}")  # a sentence to complete: "The crew agrees that the city is"
    text = raw.rstrip("?").strip()
    text = re.sub(r"^(?:about|approximately|roughly)\s+(?=how\b)", "", text, flags=re.IGNORECASE)
    text = re.sub(r"\bin what (?:way|manner)\b", "how", text, flags=re.IGNORECASE)
    text = re.sub(r"\bfor what reason\b", "why", text, flags=re.IGNORECASE)
    match = WH_LEAD.search(text)
    if match is None:
        words = text.split()
        claim = _yes_no_claim(words, option) if words and _is_aux(words[0]) else None
        return claim or _finish(f"{text}: {option}" if text else option)
    prefix = text[: match.start()].strip()
    lead = f"{prefix} " if prefix else ""
    wh, words = _wh_body(match.group(1).lower(), text[match.end() :].split())
    if not words:
        return _finish(f"{lead}{option}")
    aux = words[0].lower()
    subject_wh = wh in ("who", "what", "which", "whose", "how-many")  # "who was in ..." keeps subject order
    inverted = aux in DO_AUX or aux in NEGATED_AUX or (aux in OTHER_AUX and not subject_wh)
    if not inverted:
        # The wh-phrase is the subject: the option takes its place.
        rest = " ".join(words)
        if re.match(r"happen(?:s|ed)?\b", rest):
            return _finish(f"{lead}{option}, which {rest}")
        subject = f"that {_lower_first(option)}" if _is_clause(option) else option
        return _finish(f"{lead}{subject} {rest}")
    parts = _unfold(words[0], words[1:])
    if parts is None:
        return _finish(f"{text}: {option}")
    subject, verb, tail = parts
    clause = f"{lead}{subject} {verb}" + (f" {tail}" if tail else "")
    filler = _lower_first(option)
    if wh == "why":
        return _finish(_join_reason(clause, option))
    if wh in ("what", "which", "whose", "who", "whom", "how-many"):
        if verb in ("did", "does", "do"):  # "what did X do ..." -> the option is the action
            action = (
                option.split(" ", 1)[1] if option.split()[0].lower() in PRONOUNS and " " in option else filler
            )
            return _finish(f"{lead}{subject} {action}" + (f" {tail}" if tail else ""))
        if _is_clause(option):
            return _finish(f"{clause}: {filler}")
        if (
            tail and tail.split()[0].lower() in SUBORDINATORS
        ):  # the object gap sits before a "when ..." clause
            return _finish(f"{lead}{subject} {verb} {filler} {tail}")
        return _finish(f"{clause} {filler}")
    if wh == "where":
        return _finish(f"{clause} {option if option.lower().startswith(PREPOSITIONS) else 'in ' + filler}")
    if wh == "when":
        time = (
            f"when {filler}" if _is_clause(option) and not option.lower().startswith(TIME_STARTS) else filler
        )
        return _finish(f"{clause} {time}")
    # how: a state after linking verbs, a means for gerunds, else the manner as a following clause.
    if re.match(r"(felt|feel|feels|looked|look|looks|seemed|seem|seems|became|become|becomes)\b", verb):
        return _finish(f"{lead}{subject} {verb} {filler}" + (f" {tail}" if tail else ""))
    if re.match(r"^(?:by )?\w+ing\b", option.lower()):
        return _finish(f"{clause} {filler if filler.lower().startswith('by ') else 'by ' + filler}")
    return _finish(f"{clause}: {filler}")


def _chinese_claim(question: str, option: str) -> str:
    stem = question.strip().rstrip("？?。").strip()
    option = option.strip().rstrip("。")
    why = re.search(r"为什么|为何", stem)
    if why:
        return f"{stem[: why.start()]}{stem[why.end() :]}，因为{option}。"
    match = ZH_WH.search(stem)
    if match:
        return f"{stem[: match.start()]}{option}{stem[match.end() :]}。"
    return f"{stem}：{option}。"


def option_claim(question: str, option: str) -> str:
    """The declarative claim that choosing `option` commits to, for an English or Chinese question."""
    if CJK_CHAR.search(question):
        return _chinese_claim(question, option)
    return _english_claim(question, option)
