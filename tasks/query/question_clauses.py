"""The events a question describes, one clause each, and what it asks of them: the event that sets
them off (progression), the one just before or after one of them (order), how something changes
from one to another (arc), or what caused one (cause).

"What pivotal event sets off the chain leading to Chev's escape through the mall, his call with Doc
Miles, and the cab theft?" describes three events and asks for the episode before them: each
described event is a separate place in the story, and a question-wide search finds at most one or
two of them. Offline reading of the surface; the LLM decomposition may fill the same shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tasks.text import detect_language

PROGRESSION = re.compile(
    r"\bpivotal\b|\bturning point\b|\bsets? off\b|\bsets? (?:[\w'’]+ ){0,3}in motion\b|\binitiat|"
    r"\btrigger|\bcatalys|\bpav(?:e|es|ed|ing) the way\b|\bstarting point\b|"
    r"\bspark|\bpropel|\bchain of\b|\bescalat|\bprecipitat|\bshifts? (?:the )?(?:narrative|momentum|"
    r"trajectory|story|focus|dynamic)|\bleads? (?:directly )?to\b|\bleading (?:directly )?to\b|"
    r"关键转折|转折点|转折|引发|促成|触发|推动|导火索|起点|关键事件|关键情节|关键决定|埋下.{0,8}伏笔|开端|"
    r"奠定.{0,8}基础|叙事支点|开始转向"
)
ORDER_BEFORE = re.compile(
    r"\bjust before\b|\bshortly before\b|\bright before\b|\bbefore\b|\bprior to\b|\bby the time\b|"
    r"\bprecedes?\b|\balready\b|\bearlier\b|\bpreceding\b|之前|此前|以前|先发生|已经|已发生|到了.{1,40}时"
)
ORDER_AFTER = re.compile(
    r"\bjust after\b|\bshortly after\b|\bright after\b|\bimmediately after\b|\bafter\b|\bfollowing\b|"
    r"\bnext\b|\bsubsequent|\bthen\b|之后|此后|随后|接着|紧接着|以后|后来"
)
# "By the time X, what has already happened?" asks for anything earlier than X, not the scene next to it.
FAR_BEFORE = re.compile(r"\bby the time\b|\balready\b|\bearlier\b|到了.{1,40}时|已经|已发生|此前|先前")
ASKED_EARLIER = re.compile(r"\balready\b|已经|已发生|已先|此前", re.IGNORECASE)
# A Chinese clause with a question word is the asked part ("紧接着发生了什么"), not a described event.
ZH_ASKED = re.compile(r"什么|为何|何事|何种|哪")
# "在“X”之前，前面先发生了什么？" and "“X”之后不久，紧接着发生了什么？" ask for the scene next to X.
ZH_NEXT = re.compile(r"之前，?前面先发生|之后不久|紧接着发生")
# "What action initiates Maya's entry in the lobby scene?" asks what sets X off inside the one scene it
# names: a scene-grounding question in a progression question's words, not a chain across scenes.
ONE_SCENE = re.compile(r"\bin the [\w'’ -]{2,40} scene\b|这场戏|这一场戏")
NEAR = re.compile(r"\b(?:just|shortly|right|immediately|directly) before\b|紧接着|就在")
ARC = re.compile(
    r"\bfrom\b.{3,120}\bto\b|\bchange|\bevolv|\btransform|\bthroughout\b|\bover the course\b|"
    r"\bremain|\bconsistent|从.{2,60}到|始终|一直|转变|变化|发展"
)
CAUSE = re.compile(
    r"\bwhy\b|\bwhat (?:prompts?|causes?|caused|leads?|led|motivates?|drives?|makes?|made)\b|"
    r"\bprovokes?\b|\breason\b|为什么|为何|原因|促使|导致|使得|"
    # "What action by Thor directly leads Odin to ...", "What moment in the bowling alley explains ..."
    r"^what (?:[\w'’-]+ ){1,8}?(?:directly |immediately |most )?(?:leads?|led|motivates?|enables?|explains?|"
    r"prompts?|causes?|drives?|allows?)\b"
)
# Where a question's own framing ends and its description of events begins.
EN_SPLIT = re.compile(
    r",|;|:|\?|—|--|\bleading (?:directly )?to\b|\bleads? (?:directly )?to\b|\bsetting off\b|"
    r"\bsets? off\b|\bbefore\b|\bafter\b|\bprior to\b|\bexplains?\b|\benables?\b|\bmotivates?\b|"
    r"\bwhile\b|\bwhen\b|\band then\b|\bfrom\b|\bto\b(?= [a-z]+ing\b)|"
    r"\bas\b|\bwhich\b|\bthat\b|\bprecedes?\b|\band\b(?= (?:his|her|their|the|a|an|then)\b)"
)
ZH_SPLIT = re.compile(
    r"[，,、；;：:？?！!。“”\"「」『』\[\]【】（）()]|之前|之后|以后|以及|并且|引发|导致|促成|到了|从|直到"
)
EN_FRAME = re.compile(
    r"^(?:what|which|who|how|why|when|where|in|during|by the time|just|shortly|right)\b[^,]*?\b"
    r"(?:does|did|do|is|are|was|were|has|had|occurs?|happens?|event|moment|action|decision|"
    r"development|detail|point)\b\s*"
    r"|\b(?:shifts?|turns?|moves?|propels?|pushes?|drives?) (?:the )?(?:narrative|momentum|trajectory|story|"
    r"focus|dynamic|tension)\s*(?:toward|towards|into|to)?\s*(?:the )?(?:sequence |moment |events? )?"
    r"(?:where|in which)?",
    re.IGNORECASE,
)
ZH_FRAME = re.compile(
    r"^(?:哪一?个|什么|何种)?(?:关键)?(?:事件|决定|情节|行动|举动|转折|发展)?(?:成为|是)?(?:了)?"
    r"(?:触发|引发|促成|推动|导致)?"
)
# The asked part of an order question: the wh-led words up to its first "before" / "after" ("What
# does Jim do immediately before joining Pamela?"). They name what is asked for, not a described
# event, and anchored as one they place the walk's start anywhere in the story.
EN_ASKED = re.compile(
    r"(?:^|(?<=[,\]]))\s*(?:what|which|who|whom|how)\b[^,?\]]*?(?=\b(?:before|after|prior to|precedes?)\b)",
    re.IGNORECASE,
)
SCENE_CLAUSE = re.compile(r"^(?:in |在)?\s*[\[【]?\s*(?:第\s*)?\d+\s*(?:场|、|\.|\s)", re.IGNORECASE)
EN_STOP = frozenset(
    "a an the of to in on at by for with and or but his her their its he she they it this that these those "
    "what which who whom whose how why when where is are was were be been being do does did has have had "
    "event events moment pivotal key chain actions action subsequent narrative story point turning "
    "leading leads lead directly shift shifts toward towards sets set off initiates initiate trigger "
    "triggers occurs occur happens happen just shortly right before after during later earlier first".split()
)
MIN_EN_WORDS = 2
MIN_ZH_CHARS = 4
MAX_CLAUSES = 4


@dataclass(frozen=True)
class QuestionShape:
    """What a question asks of the events it describes, and those events as clauses."""

    kind: str  # progression | order | arc | cause | local
    direction: str  # before | after | "" (which way from the described events the answer lies)
    clauses: tuple[str, ...]
    far: bool = False  # an order question about anything earlier ("already"), not the next scene


def _content_words(clause: str) -> list[str]:
    return [w for w in re.findall(r"[a-z0-9'’]+", clause.lower()) if w not in EN_STOP]


def _keep(clause: str, cjk: bool) -> bool:
    if cjk:
        return len(re.findall(r"[\u4e00-\u9fff]", clause)) >= MIN_ZH_CHARS
    return len(_content_words(clause)) >= MIN_EN_WORDS


def question_clauses(question: str) -> tuple[str, ...]:
    """The event descriptions of a question, longest first-seen order kept, at most MAX_CLAUSES."""
    text = question.strip()
    cjk = detect_language(text) == "zh"
    quoted = [q.strip() for q in re.findall(r"[“\"「『]([^”\"」』]{4,120})[”\"」』]", text)]
    pieces = ZH_SPLIT.split(text) if cjk else EN_SPLIT.split(EN_ASKED.sub(" ", text, count=1))
    clauses: list[str] = []
    for piece in quoted + pieces:
        piece = piece.strip(" .,;:!?'\"")
        piece = (ZH_FRAME if cjk else EN_FRAME).sub("", piece).strip(" .,;:!?'\"")
        if SCENE_CLAUSE.match(piece):
            continue  # a scene the question names is pinned by its heading, not searched for
        if piece and _keep(piece, cjk) and piece not in clauses and piece != text:
            clauses.append(piece)
    # A clause inside another (a quoted event also split by its commas) says nothing new.
    distinct = [c for c in clauses if not any(c != other and c in other for other in clauses)]
    return tuple(distinct[:MAX_CLAUSES])


def read_shape(question: str) -> QuestionShape:
    """The question's shape: progression, order, arc, cause or local, with its clauses."""
    lowered = question.lower()
    far = False
    before = bool(ORDER_BEFORE.search(lowered))
    after = bool(ORDER_AFTER.search(lowered))
    if PROGRESSION.search(lowered) and not ZH_NEXT.search(lowered) and not ONE_SCENE.search(lowered):
        kind, direction = "progression", "before"
    elif before or after:
        kind, direction = "order", "before" if before else "after"
        far = before and bool(FAR_BEFORE.search(lowered)) and not NEAR.search(lowered)
    elif ARC.search(lowered):
        kind, direction = "arc", ""
    elif CAUSE.search(lowered):
        kind, direction = "cause", "before"
    else:
        kind, direction = "local", ""
    clauses = question_clauses(question)
    if far:  # "what has already happened" is what is asked, not an event to anchor
        clauses = tuple(c for c in clauses if not ASKED_EARLIER.search(c)) or clauses
    if kind in ("progression", "order"):
        clauses = tuple(c for c in clauses if not ZH_ASKED.search(c)) or clauses
    return QuestionShape(kind, direction, clauses, far)
