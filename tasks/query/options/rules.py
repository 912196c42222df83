"""Surface rules behind the option-admission verdicts: terms, names, negation cues, causal
connectives and theme-like wording. Pure functions over strings; English rules with Chinese
negation and connective cues where the surface allows."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.query.options.verbs import IRREGULAR_PAST
from tasks.text import CJK_CHAR, STOPWORDS_EN, WORD, _stem, content_words

NEGATION_WORDS = frozenset(
    "not never no none nobody nothing neither nor without cannot refused refuses refuse refusing".split()
)
ZH_NEGATION = re.compile(r"不|没有|没|未|并非|拒绝|无法|别")
NEGATION_WINDOW = 4  # tokens (English) or characters (Chinese) before a matched term
PRONOUN_SUBJECTS = frozenset("he she they it we i you his her their".split())
# Connectives read left to right: which side of the cue holds the cause.
CAUSE_CUES = re.compile(r"\b(?:because of|because|since|due to|as a result of|thanks to|after)\b|因为|由于")
EFFECT_CUES = re.compile(
    r"\b(?:as a result|so that|so|therefore|thus|hence|consequently|which led to|leading to|"
    r"resulting in|causing|and then|then)\b|所以|因此|于是|结果|导致"
)
CAUSE_QUESTION = re.compile(
    r"\bwhy\b|\bcaus|\breason|\bled to\b|\blead to\b|\bmotiv|\bwhat made\b|\bprompt|为什么|为何|原因|导致"
)
CONSEQUENCE_QUESTION = re.compile(
    r"\bresult|\bconsequen|\beffect\b|\boutcome\b|\bwhat happened (?:after|next|then)\b|结果|后果"
)
EXCEPTION_QUESTION = re.compile(
    r"\bexcept\b|\bfalse statement|\bis false\b|\buntrue\b|\bleast likely\b"
    r"|\bnot (?:true|a reason|one of|mentioned)\b|\bwhich\b.*\bnot\b|不正确|错误的是|除了"
)
THEME_QUESTION = re.compile(
    r"\btheme|\blesson\b|\bmoral\b|\bmessage\b|\bmain idea\b|\bmostly about\b|\bpurpose of the "
    r"(?:story|passage|author)|\bauthor|\bsymbol|\bbest describes?\b|\boverall\b|\bnature of\b"
    r"|\brelationship\b|\bcharacteri[sz]|主题|寓意|象征|意义"
)
CONSEQUENCE_CUE = re.compile(
    r"\b(?:eventually|later|ended up|ends up|end up|in the end|as a result|afterwards?|finally|"
    r"resulted|ultimately|from then on)\b|最终|后来|结果"
)
ABSTRACT_WORDS = frozenset(
    """love hate greed power freedom friendship loyalty courage fear hope nature society humanity truth
justice fate life death change identity family importance value kindness pride ambition betrayal trust
sacrifice happiness sadness loneliness jealousy envy honor honour duty faith belief morality progress
tradition wisdom knowledge ignorance innocence corruption survival revenge redemption good evil human moral
social important general various different overall
greater common idea ideas concept concepts theme themes things something life's people world""".split()
)
ABSTRACT_SUFFIXES = ("ness", "ity", "ism", "hood", "ship", "dom", "ment", "ance", "ence")


@dataclass(frozen=True)
class Sentence:
    snippet_id: str
    snippet_pos: int
    index: int
    text: str
    terms: frozenset[str] | set[str]


# Irregular past forms meet their base ("went" -> "go") so "He went" matches "did not go". Forms that
# are more often nouns than verbs are left alone.
PAST_TO_BASE = {
    _stem(past): _stem(base)
    for base, past in IRREGULAR_PAST.items()
    if past not in ("rose", "bit", "lay", "saw", "found", "left", "read", "put", "set", "cut", "hit", "hurt")
}


def terms_of(text: str) -> set[str]:
    """Content terms: stemmed English words (irregular pasts as their base); Chinese bigrams (single
    characters only when nothing else)."""
    terms = {PAST_TO_BASE.get(t, t) for t in content_words(text)}
    longer = {t for t in terms if not (len(t) == 1 and CJK_CHAR.match(t))}
    return longer or terms


def term_key(word: str) -> str:
    """The index term of one word (lower-cased, stemmed), as `terms_of` would produce it."""
    stem = _stem(word.lower())
    return PAST_TO_BASE.get(stem, stem)


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in WORD.findall(text)]


def names_in(text: str, known: set[str] | None) -> set[str]:
    """Capitalised words (lower-cased) that are names; a sentence-initial one only if `known` lists it.

    With known=None, returns every capitalised word seen in a non-initial position (the name lexicon).
    """
    names: set[str] = set()
    for sentence in re.split(r"(?<=[.!?])\s+|\n+", text):
        words = re.findall(r"[A-Za-z][A-Za-z'’-]*", sentence)
        for position, word in enumerate(words):
            lowered = re.sub(r"['’]s$", "", word.lower())
            if (
                not word[0].isupper()
                or lowered in STOPWORDS_EN
                or lowered in PRONOUN_SUBJECTS
                or len(lowered) < 2
            ):
                continue
            if position > 0 or (known is not None and lowered in known):
                names.add(lowered)
    return names


def has_negation(text: str) -> bool:
    """Whether a text carries a negation cue (not, never, no longer, refused, n't; 不/没/未 ...)."""
    if CJK_CHAR.search(text):
        return bool(ZH_NEGATION.search(text))
    return any(t in NEGATION_WORDS or t.endswith(("n't", "n’t")) for t in _tokens(text))


def negated_near(text: str, matched: set[str]) -> bool:
    """Whether a negation cue stands shortly before any of the matched option terms in `text`."""
    if not matched:
        return False
    if CJK_CHAR.search(text):
        for term in matched:
            for hit in re.finditer(re.escape(term), text):
                if ZH_NEGATION.search(text[max(0, hit.start() - NEGATION_WINDOW) : hit.start()]):
                    return True
        return False
    tokens = _tokens(text)
    for position, token in enumerate(tokens):
        if term_key(token) in matched:
            window = tokens[max(0, position - NEGATION_WINDOW) : position]
            if any(t in NEGATION_WORDS or t.endswith(("n't", "n’t")) or t == "longer" for t in window):
                return True
    return False


def _side_terms(text: str) -> set[str]:
    return {term_key(t) for t in _tokens(text)} | terms_of(text)


def actor_mismatch(
    question: str,
    option: str,
    sentence: str,
    predicate: set[str],
    question_names: set[str],
    known_names: set[str],
) -> str | None:
    """The other actor when the sentence ties the asked predicate to the option's named entity instead of the
    question's (None when the question names nobody, asks who, or the sentence keeps the asked actor)."""
    if not question_names or re.match(r"\s*(?:who|whom|which)\b", question, re.IGNORECASE):
        return None
    others = names_in(option, known_names) - question_names
    sentence_names = names_in(sentence, known_names)
    if not others or not (others & sentence_names) or (question_names & sentence_names):
        return None
    tokens = _tokens(sentence)
    keys = [term_key(t) for t in tokens]
    first_predicate = next((i for i, k in enumerate(keys) if k in predicate), None)
    if first_predicate is None:
        return None
    # The other actor must be the subject of the asked predicate: named before it, with no pronoun
    # in between that could stand for the asked actor.
    before = tokens[:first_predicate]
    if any(t in PRONOUN_SUBJECTS for t in before) or not any(t in others for t in before):
        return None
    return sorted(others & set(before))[0].capitalize()


def reversed_relation(
    sentence: str, matched: set[str], predicate: set[str], cause_question: bool, consequence_question: bool
) -> str | None:
    """A note when a causal connective puts the option on the wrong side of the asked event."""
    if not (cause_question or consequence_question) or not matched or not predicate:
        return None
    lowered = sentence.lower()
    cue = min(
        (m for pattern in (CAUSE_CUES, EFFECT_CUES) for m in pattern.finditer(lowered)),
        key=lambda m: m.start(),
        default=None,
    )
    if cue is None:
        return None
    if CAUSE_CUES.fullmatch(cue.group(0)):
        if cue.start() < 3:  # "Because X, Y": the cause runs to the first comma
            comma = lowered.find(",", cue.end())
            if comma < 0:
                return None
            cause, effect = lowered[cue.end() : comma], lowered[comma + 1 :]
        else:
            cause, effect = lowered[cue.end() :], lowered[: cue.start()]
    else:
        cause, effect = lowered[: cue.start()], lowered[cue.end() :]
    cause_terms, effect_terms = _side_terms(cause), _side_terms(effect)
    option_in_effect = len(matched & effect_terms) > len(matched & cause_terms)
    option_in_cause = len(matched & cause_terms) > len(matched & effect_terms)
    if cause_question and option_in_effect and predicate & cause_terms - matched:
        return "makes this a consequence of the asked event, not its cause"
    if consequence_question and not cause_question and option_in_cause and predicate & effect_terms - matched:
        return "makes this a cause of the asked event, not its result"
    return None


def asks_for_cause(question: str) -> bool:
    return bool(CAUSE_QUESTION.search(question.lower()))


def asks_for_consequence(question: str) -> bool:
    return bool(CONSEQUENCE_QUESTION.search(question.lower()))


def asks_for_exception(question: str) -> bool:
    """Whether a multiple-choice question asks for the option that is NOT true (EXCEPT / false statement)."""
    return bool(EXCEPTION_QUESTION.search(question.lower()))


def is_theme_question(question: str) -> bool:
    return bool(THEME_QUESTION.search(question.lower()))


def has_consequence_cue(option: str) -> bool:
    return bool(CONSEQUENCE_CUE.search(option.lower()))


def theme_like(option: str, known_names: set[str]) -> bool:
    """A broad option: mostly abstract nouns, no names, no numbers."""
    if CJK_CHAR.search(option) or re.search(r"\d", option) or names_in(option, known_names):
        return False
    words = [w for w in _tokens(option) if w not in STOPWORDS_EN]
    if not words:
        return False
    abstract = [w for w in words if w in ABSTRACT_WORDS or (len(w) > 5 and w.endswith(ABSTRACT_SUFFIXES))]
    return len(abstract) >= max(1, 0.6 * len(words))
