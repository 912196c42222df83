"""A small English verb lexicon for turning questions into statements without a parser: irregular
past forms, participles, common regular verbs, and the past / third-person forms of a base verb.
"""

from __future__ import annotations

import re

IRREGULAR_PAST = {
    "be": "was",
    "become": "became",
    "begin": "began",
    "bite": "bit",
    "blow": "blew",
    "break": "broke",
    "bring": "brought",
    "build": "built",
    "burn": "burnt",
    "buy": "bought",
    "catch": "caught",
    "choose": "chose",
    "come": "came",
    "cost": "cost",
    "cut": "cut",
    "deal": "dealt",
    "dig": "dug",
    "do": "did",
    "draw": "drew",
    "dream": "dreamt",
    "drink": "drank",
    "drive": "drove",
    "eat": "ate",
    "fall": "fell",
    "feed": "fed",
    "feel": "felt",
    "fight": "fought",
    "find": "found",
    "flee": "fled",
    "fly": "flew",
    "forget": "forgot",
    "forgive": "forgave",
    "freeze": "froze",
    "get": "got",
    "give": "gave",
    "go": "went",
    "grow": "grew",
    "hang": "hung",
    "have": "had",
    "hear": "heard",
    "hide": "hid",
    "hit": "hit",
    "hold": "held",
    "hurt": "hurt",
    "keep": "kept",
    "know": "knew",
    "lay": "laid",
    "lead": "led",
    "leave": "left",
    "lend": "lent",
    "let": "let",
    "lie": "lay",
    "light": "lit",
    "lose": "lost",
    "make": "made",
    "mean": "meant",
    "meet": "met",
    "pay": "paid",
    "put": "put",
    "quit": "quit",
    "read": "read",
    "ride": "rode",
    "ring": "rang",
    "rise": "rose",
    "run": "ran",
    "say": "said",
    "see": "saw",
    "seek": "sought",
    "sell": "sold",
    "send": "sent",
    "set": "set",
    "shake": "shook",
    "shine": "shone",
    "shoot": "shot",
    "shut": "shut",
    "sing": "sang",
    "sink": "sank",
    "sit": "sat",
    "sleep": "slept",
    "slide": "slid",
    "speak": "spoke",
    "spend": "spent",
    "spin": "spun",
    "stand": "stood",
    "steal": "stole",
    "stick": "stuck",
    "strike": "struck",
    "swear": "swore",
    "sweep": "swept",
    "swim": "swam",
    "take": "took",
    "teach": "taught",
    "tear": "tore",
    "tell": "told",
    "think": "thought",
    "throw": "threw",
    "understand": "understood",
    "wake": "woke",
    "wear": "wore",
    "weep": "wept",
    "win": "won",
    "write": "wrote",
}
PARTICIPLES = frozenset(
    """been become begun bitten blown broken brought built born borne bought caught chosen come done drawn
driven eaten fallen fed felt fought found fled flown forgotten forgiven frozen got gotten given gone grown
hung heard hidden held hurt kept known laid led left lent lost made meant met paid put read ridden rung risen
run said seen sought sold sent set shaken shot shut sung sunk sat slept spoken spent spun stood stolen stuck
struck sworn swept swum taken taught torn told
thought thrown understood woken worn won written located stripped""".split()
)
REGULAR_VERBS = frozenset(
    """accept act add admire admit agree allow answer appear apply arrive ask attack avoid believe belong
call care carry cause change chase check cheat claim climb close collect complete consider continue convince
cook cough count cover crawl cry dance decide defend deliver demand deny depend describe destroy die disappear
discover dislike dress drop enjoy enter escape expect explain fail fear fill finish fix follow force gather
greet guess happen hate help hope hunt hurry ignore imagine insist intend invite join jump kill kiss laugh
learn like listen live look love manage marry mention miss move need notice obey offer open order own pass
pick plan play please point prefer prepare pretend promise protect prove pull punish push reach realize
realise receive recognize refuse remain remember repeat reply report rescue rest return roll rush save scold
scream search seem serve share shout show smile sneak solve start stay stop study succeed suggest suppose
surprise survive talk taste thank touch travel treat trick trust try turn use visit wait walk want warn wash
watch wish wonder work
worry""".split()
)
BASE_VERBS = frozenset(IRREGULAR_PAST) | REGULAR_VERBS


def past(verb: str) -> str:
    if verb in IRREGULAR_PAST:
        return IRREGULAR_PAST[verb]
    if verb.endswith("e"):
        return verb + "d"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ied"
    if re.fullmatch(r"[^aeiou]*[aeiou][bdgmnpt]", verb) and len(verb) <= 4:
        return verb + verb[-1] + "ed"  # stop -> stopped, plan -> planned
    return verb + "ed"


def third_person(verb: str) -> str:
    if verb == "have":
        return "has"
    if verb in ("do", "go"):
        return verb + "es"
    if re.search(r"(s|sh|ch|x|z)$", verb):
        return verb + "es"
    if re.search(r"[^aeiou]y$", verb):
        return verb[:-1] + "ies"
    return verb + "s"


def is_verb(word: str) -> bool:
    w = word.lower().strip(",;:")
    return w in BASE_VERBS or w in PARTICIPLES or (len(w) > 4 and w.endswith(("ing", "ed")))
