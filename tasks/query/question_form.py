"""What a question asks for, read from its surface form: the wh-word, the answer slot and
temporal / causal cues. Used offline to steer retrieval and extractive answering."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

WH_PATTERNS = (
    ("why", r"\bwhy\b|\bwhat (?:made|caused|led|prompted|motivated)\b|\bfor what reason\b|为什么|为何|原因"),
    ("how", r"\bhow\b|怎么|如何|怎样"),
    ("who", r"\bwho(?:m|se)?\b|\bwhich (?:character|person)\b|谁|哪位"),
    ("when", r"\bwhen\b|\bwhat time\b|什么时候|何时"),
    ("where", r"\bwhere\b|\bwhat (?:place|location)\b|哪里|哪儿|在哪"),
    ("which", r"\bwhich\b|哪个|哪一"),
    ("what", r"\bwhat\b|什么"),
)
TEMPORAL_CUES = {
    "before": r"\bbefore\b|\bprior to\b|\bearlier\b|之前|以前",
    "after": r"\bafter\b|\blater\b|\bfollowing\b|\bthen\b|之后|以后|后来",
    "first": r"\bfirst\b|\binitial(?:ly)?\b|\bbegin|\bstart|最初|首先|第一",
    "last": r"\blast\b|\bfinal(?:ly)?\b|\bend\b|最后|最终",
    "change": r"\bchange|\bshift|\bturn(?:ing)? point\b|\bevolv|\btransform|变化|转变",
}
CAUSAL_CUES = (
    r"\bbecause\b|\bcause|\bled to\b|\bresult|\bconsequence|\bmotivat|\bwhy\b|\bin order to\b|导致|因为|结果"
)
ANSWER_CUES = {
    "why": ("because", "so that", "in order to", " to ", "since", "so ", "因为", "为了", "所以"),
    "when": (
        "when",
        "after",
        "before",
        "during",
        "night",
        "day",
        "morning",
        "evening",
        "year",
        "时",
        "后",
        "前",
    ),
    "where": (" in ", " at ", " on ", " into ", " from ", "在", "到"),
    "how": ("by ", "with ", "using", "through", "用", "通过"),
}


@dataclass(frozen=True)
class QuestionForm:
    wh: str  # why | how | who | when | where | which | what | yesno | other
    temporal: tuple[str, ...] = ()
    is_causal: bool = False
    is_multiple_choice: bool = False
    quoted: tuple[str, ...] = field(default_factory=tuple)  # phrases in quotes: literal anchors


def read_question(question: str, options: list[str] | None = None) -> QuestionForm:
    text = question.strip()
    lowered = text.lower()
    wh = "other"
    for name, pattern in WH_PATTERNS:
        if re.search(pattern, lowered):
            wh = name
            break
    if wh == "other" and re.match(
        r"^(is|are|was|were|do|does|did|can|could|will|would|has|have|had|should)\b", lowered
    ):
        wh = "yesno"
    temporal = tuple(name for name, pattern in TEMPORAL_CUES.items() if re.search(pattern, lowered))
    quoted = tuple(q for q in re.findall(r"[\"“”']([^\"“”']{3,80})[\"“”']", text))
    return QuestionForm(
        wh=wh,
        temporal=temporal,
        is_causal=bool(re.search(CAUSAL_CUES, lowered)) or wh == "why",
        is_multiple_choice=bool(options),
        quoted=quoted,
    )


def answer_cue_bonus(form: QuestionForm, sentence: str) -> float:
    """A small bonus for sentences shaped like an answer to this form (e.g. 'because' for why)."""
    cues = ANSWER_CUES.get(form.wh)
    if not cues:
        return 0.0
    lowered = f" {sentence.lower()} "
    return 0.1 if any(cue in lowered for cue in cues) else 0.0
