"""Word cues of the heuristic narrative extractor (English and Chinese): event types from
verbs, interaction types from a line of dialogue or from a transitive verb between two
characters, and temporal phrases. Plain data and small pure functions."""

from __future__ import annotations

import re


def _inflect(*bases: str) -> set[str]:
    """Regular English verb forms of each base ("arrive" -> arrive, arrives, arrived, arriving)."""
    forms: set[str] = set()
    for base in bases:
        stem = base[:-1] if base.endswith("e") else base
        s_form = base + ("es" if base.endswith(("s", "sh", "ch", "x", "o")) else "s")
        if base.endswith("y") and base[-2:-1] not in "aeiou":
            s_form, past = base[:-1] + "ies", base[:-1] + "ied"
        else:
            past = base + "d" if base.endswith("e") else base + "ed"
        forms.update({base, s_form, past, stem + "ing"})
    return forms


EN_EVENT_VERBS: dict[str, set[str]] = {
    "arrival": _inflect("arrive", "enter", "return", "reach", "approach", "appear", "land")
    | {"come", "comes", "came", "coming", "steps in", "walks in", "burst in", "bursts in"},
    "departure": _inflect("leave", "exit", "depart", "flee", "escape", "vanish", "disappear")
    | {
        "go",
        "goes",
        "went",
        "gone",
        "left",
        "fled",
        "walks away",
        "walks off",
        "runs off",
        "drives off",
        "drives away",
        "storms out",
        "walks out",
    },
    "discovery": _inflect(
        "discover",
        "realise",
        "realize",
        "notice",
        "spot",
        "learn",
        "recognise",
        "recognize",
        "overhear",
        "uncover",
    )
    | {"find", "finds", "found", "see", "sees", "saw", "seen", "hear", "hears", "heard", "catches sight"},
    "decision": _inflect("decide", "agree", "resolve", "determine", "vow", "promise")
    | {"choose", "chooses", "chose", "makes up his mind", "makes up her mind"},
    "state_change": _inflect("die", "collapse", "faint", "wake", "marry", "change")
    | {
        "become",
        "becomes",
        "became",
        "break",
        "breaks",
        "broke",
        "broken",
        "falls asleep",
        "fell asleep",
        "wakes up",
        "woke",
        "dies",
        "died",
        "grow",
        "grows",
        "grew",
        "turns into",
        "turned into",
    },
    "communication": _inflect("call", "phone", "shout", "whisper", "announce", "explain", "reply", "answer")
    | {"tell", "tells", "told", "say", "says", "said", "speak", "speaks", "spoke"},
}
EN_EVENT_KIND = {phrase: kind for kind, words in EN_EVENT_VERBS.items() for phrase in words}


def _alternation(phrases: "dict[str, str]") -> re.Pattern[str]:
    """One regex over all phrases, longest first, on word boundaries (leftmost match wins)."""
    ordered = sorted(phrases, key=lambda p: (-len(p), p))
    return re.compile(r"(?<![\w'])(?:" + "|".join(re.escape(p) for p in ordered) + r")(?![\w'])")


EN_EVENT_RE = _alternation(EN_EVENT_KIND)
NEGATION = re.compile(r"(?:\bnot|n't|\bnever)\s+(?:\w+\s+)?$")

ZH_EVENT_CUES: list[tuple[str, str]] = [
    *[
        (w, "arrival")
        for w in ("来到", "走进", "进来", "到达", "回到", "赶到", "进入", "出现", "走来", "赶来", "回来")
    ],
    *[
        (w, "departure")
        for w in ("离开", "走了", "走出", "出去", "离去", "跑了", "开走", "逃走", "走远", "退出")
    ],
    *[(w, "discovery") for w in ("发现", "看见", "看到", "注意到", "意识到", "得知", "认出", "听到", "听见")],
    *[(w, "decision") for w in ("决定", "选择", "答应", "同意", "打算", "下定决心")],
    *[
        (w, "state_change")
        for w in ("去世", "死了", "倒在", "晕倒", "睡着", "醒来", "病倒", "变成", "昏倒", "死去")
    ],
    *[(w, "communication") for w in ("打电话", "告诉", "喊", "叫道", "说道")],
]


def event_type(text: str, language: str, after: int = 0) -> str:
    """The event type cued by the first verb in `text` at or after position `after`, else 'action'."""
    if language == "zh":
        hits = [(text.find(cue, after), kind) for cue, kind in ZH_EVENT_CUES if text.find(cue, after) >= 0]
        return min(hits)[1] if hits else "action"
    lowered = text.lower()
    for match in EN_EVENT_RE.finditer(lowered, after):
        # "does not hear it" is no discovery: skip negated verbs.
        if not NEGATION.search(lowered[max(0, match.start() - 12) : match.start()]):
            return EN_EVENT_KIND[match.group(0)]
    return "action"


# --- interactions -------------------------------------------------------------------------

# Checked in order: the first type whose cue the line contains wins.
EN_LINE_CUES: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(pattern, re.IGNORECASE))
    for kind, pattern in (
        (
            "threaten",
            r"\bor else\b|\bi'?ll kill\b|\bi will kill\b|\byou'?ll regret\b|"
            r"\bi'?ll make you\b|\bi'?ll hurt\b",
        ),
        (
            "comfort",
            r"\bdon'?t worry\b|\bit'?s (?:all right|alright|okay|ok)\b|"
            r"\bi'?m (?:so )?sorry\b|\bthank|\bthere, there\b",
        ),
        (
            "warn",
            r"\bdon'?t\b|\bwatch out\b|\bcareful\b|\bwarn(?:s|ed)?\b|"
            r"\bi'?m warning\b|\bbeware\b|\blook out\b|"
            r"\bstay away\b|\bdo not\b",
        ),
        (
            "request",
            r"\bplease\b|\bcould you\b|\bwould you\b|\bcan you\b|"
            r"\bi need you to\b|\bwill you\b|\bi'?m asking you\b",
        ),
        (
            "accuse",
            r"\byou(?:'re| are|'ve| have)? lying\b|\byou(?:'ve| have)? lied\b|\bliar\b|\bit was you\b|"
            r"\bhow could you\b|\byour fault\b|\byou did this\b",
        ),
        ("refuse", r"^\W*no\b|\bi won'?t\b|\bi refuse\b|\bi can'?t\b|\bnot going to\b"),
        ("greet", r"^\W*(?:hello|hi|hey|good (?:morning|evening|afternoon)|welcome)\b"),
        (
            "persuade",
            r"\btrust me\b|\byou have to\b|\byou should\b|"
            r"\bwe (?:must|have to)\b|\bthink about it\b|\bcome on\b",
        ),
    )
]
EN_IMPERATIVES = frozenset(
    """
go come listen look tell give take keep get stop put bring
sit stand wait leave let help open close shut hand show
move run call read post hold follow remember forget find say answer drop turn wake hurry move
""".split()
)
ZH_LINE_CUES: list[tuple[str, re.Pattern[str]]] = [
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("threaten", r"弄死|信不信|杀了你|你等着|饶不了|废了你"),
        ("comfort", r"谢|没事|别怕|别担心|对不起|不要紧|放心"),
        ("warn", r"警告|小心|当心|别|不要|不许"),
        ("request", r"求|请|帮我|拜托|麻烦|行吗|好不好|好不啦"),
        ("accuse", r"你骗|都怪你|自私|是你干的|你害"),
        ("refuse", r"不行|不用|用不着|不会做|不干|没门|不可能"),
        ("greet", r"^(?:你好|您好|早上好|晚上好)"),
        ("persuade", r"相信我|你应该|我们必须|想想|商机"),
        ("command", r"^(?:滚|拿着|走|快|站住|出去|过来|张开|手拿开|放开)"),
    )
]


def line_type(line: str, language: str, answers_question: bool = False) -> str:
    """Interaction type of one dialogue line from its cues; 'answer' when it replies to a question."""
    text = line.strip()
    patterns = ZH_LINE_CUES if language == "zh" else EN_LINE_CUES
    for kind, pattern in patterns:
        if pattern.search(text):
            return kind
    if "?" in text or "？" in text or (language == "zh" and ZH_QUESTION.search(text)):
        return "ask"
    if answers_question:
        return "answer"
    if language != "zh" and any(m.group(1).lower() in EN_IMPERATIVES for m in LEADING_WORD.finditer(text)):
        return "command"
    return "inform"


# The first word of each sentence, past a vocative ("Maggie, listen") or a connective ("Then take it").
LEADING_WORD = re.compile(
    r"(?:^|[.!?]\s+)(?:[A-Z][\w.'’-]*(?: [A-Z][\w'’-]*)?[,!]\s+|(?:then|now|and|just|so|please)\s+)?"
    r"([A-Za-z']+)\b(?!')",
    re.IGNORECASE,
)


ZH_QUESTION = re.compile(r"[吗呢][。！…]*$|^(?:什么|为什么|怎么|多少|哪|谁)")


# Transitive verbs between two characters in an action sentence: verb forms -> interaction type.
EN_TRANSITIVE: dict[str, str] = {
    **{w: "give" for w in _inflect("hand", "pass", "offer") | {"give", "gives", "gave", "given", "giving"}},
    **{
        w: "attack"
        for w in _inflect("attack", "punch", "slap", "kick", "shoot", "stab", "push", "grab", "strangle")
        | {"hit", "hits", "hitting", "strikes", "struck", "shoots", "shot"}
    },
    **{w: "hide" for w in _inflect("hide", "conceal") | {"hid", "hidden"}},
    **{w: "deceive" for w in _inflect("deceive", "trick", "fool", "lie") | {"lies to", "lied to"}},
    **{w: "help" for w in _inflect("help", "rescue", "save", "support", "assist")},
    **{w: "threaten" for w in _inflect("threaten")},
    **{w: "warn" for w in _inflect("warn")},
    **{w: "ask" for w in _inflect("ask", "question")},
    **{w: "inform" for w in {"tells", "told", "informs", "informed", "shows", "showed"}},
    **{w: "comfort" for w in _inflect("hug", "comfort", "console", "embrace", "kiss") | {"pats"}},
    **{w: "greet" for w in _inflect("greet", "welcome", "wave") | {"nods to"}},
    **{w: "confront" for w in _inflect("confront", "challenge") | {"glares at", "stares at"}},
    **{w: "persuade" for w in _inflect("persuade", "convince", "urge")},
    **{w: "command" for w in _inflect("order", "command")},
    **{w: "accuse" for w in _inflect("accuse", "blame")},
    **{w: "refuse" for w in _inflect("refuse", "reject", "ignore")},
    **{w: "request" for w in _inflect("beg", "plead")},
}
EN_TRANSITIVE_RE = _alternation(EN_TRANSITIVE)
ZH_TRANSITIVE: list[tuple[str, str]] = [
    ("递给", "give"),
    ("交给", "give"),
    ("给了", "give"),
    ("递", "give"),
    ("抽打", "attack"),
    ("打", "attack"),
    ("推", "attack"),
    ("踢", "attack"),
    ("揍", "attack"),
    ("骗", "deceive"),
    ("帮", "help"),
    ("救", "help"),
    ("警告", "warn"),
    ("问", "ask"),
    ("告诉", "inform"),
    ("抱", "comfort"),
    ("安慰", "comfort"),
    ("藏", "hide"),
    ("威胁", "threaten"),
    ("劝", "persuade"),
    ("指着", "accuse"),
    ("拦住", "confront"),
    ("瞪", "confront"),
    ("求", "request"),
    ("拒绝", "refuse"),
    ("命令", "command"),
]


def transitive_type(text: str, language: str) -> tuple[str, int, int] | None:
    """(interaction type, start, end) of the first transitive cue in an action sentence, or None."""
    if language == "zh":
        hits = [(text.find(cue), -len(cue), kind, cue) for cue, kind in ZH_TRANSITIVE if cue in text]
        if not hits:
            return None
        start, negative_length, kind, _ = min(hits)
        return kind, start, start - negative_length
    match = EN_TRANSITIVE_RE.search(text.lower())
    return (EN_TRANSITIVE[match.group(0)], match.start(), match.end()) if match else None


# --- time ---------------------------------------------------------------------------------

EN_TIME_PHRASE = re.compile(
    r"\b(?:(?:the )?(?:next|following|previous) (?:day|morning|night|evening|week|year)|"
    r"(?:that|this|last|one|every) (?:day|morning|night|evening|afternoon|week|year|summer|winter)|"
    r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)(?: (?:morning|night|evening|afternoon))?|"
    r"(?:moments?|minutes?|hours?|days?|weeks?|months?|years?) (?:later|before|ago)|"
    r"at (?:dawn|dusk|noon|midnight|night|sunset|sunrise)|later|meanwhile|once upon a time|in the old days|"
    r"in the (?:morning|evening|night|afternoon))\b",
    re.IGNORECASE,
)
ZH_TIME_PHRASE = re.compile(
    r"(?:[0-9一二三四五六七八九十几两]+(?:天|年|个月|周|小时|分钟)(?:后|以后|前|之后))|第二天|次日|当晚|当天|清晨|"
    r"早上|晚上|深夜|半夜|凌晨|后来|此时|这时|同时|周[一二三四五六日]|星期[一二三四五六日天]|下个礼拜|上个月"
)


def time_cue(text: str, language: str, scene_time: str | None = None) -> str | None:
    """The first temporal phrase in `text`, else the scene's time of day (lower case), else None."""
    match = (ZH_TIME_PHRASE if language == "zh" else EN_TIME_PHRASE).search(text)
    if match:
        return match.group(0)
    return scene_time.lower() if scene_time else None
