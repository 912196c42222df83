"""Multiple-choice option admission: claims per question form, every verdict kind on small
hand-made evidence, the finalizer's choice and gap note, determinism, and the LLM reader with its
fallback to the offline rules."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Sequence

import numpy as np
import pytest

from schemas.responses.query import VERDICTS, OptionAdmissionReply
from tasks.embeddings import HashingEmbedder
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.query.options.admission import (
    DENSE_CANDIDATES,
    MAX_EMBEDDED,
    EvidenceSnippet,
    OptionVerdict,
    admit_options,
    admit_options_llm,
    asks_for_exception,
    choose_option,
    option_claim,
)
from tests.fixtures.llm_fixtures import fast_llm_settings, request_factory
from tests.fixtures.openai_server import FakeOpenAIServer, last_user_text


def snippet(snippet_id: str, text: str, kind: str = "sentence", score: float = 1.0) -> EvidenceSnippet:
    return EvidenceSnippet(snippet_id, text, "sec-1", kind, score)


# -- claims ----------------------------------------------------------------------------------

CLAIMS = [
    (
        "Why did Ferdinand think the sign did not apply to him?",
        "He wasn't officially on the manifest",
        "Ferdinand thought the sign did not apply to him because he wasn't officially on the manifest.",
    ),
    (
        "Why were men stripped of the right to vote?",
        "The women got tired of them going to war",
        "Men were stripped of the right to vote because the women got tired of them going to war.",
    ),
    (
        "Why didn't the eldest Princess share her porridge?",
        "She was greedy",
        "The eldest Princess did not share her porridge because she was greedy.",
    ),
    (
        "Why did the Giant take the eldest Princess?",
        "To make her his servant",
        "The Giant took the eldest Princess to make her his servant.",
    ),
    ("What did Charcoal Nils do in his home?", "chopped wood", "Charcoal Nils chopped wood in his home."),
    (
        "What abilities does the spy appear to have?",
        "Shape shifting",
        "The spy appears to have Shape shifting.",
    ),
    (
        "What caused Holden to leave the diner?",
        "Banky insulted Alyssa",
        "That Banky insulted Alyssa caused Holden to leave the diner.",
    ),
    (
        "What happened to Linda in the end?",
        "She married Tom",
        "She married Tom, which happened to Linda in the end.",
    ),
    ("Who was in the elevator?", "A spy", "A spy was in the elevator."),
    (
        "Who did Tephany think the little old woman was?",
        "a fairy",
        "Tephany thought the little old woman was a fairy.",
    ),
    ("Where did Charcoal Nils make a home?", "the forest", "Charcoal Nils made a home in the forest."),
    (
        "Where was the man in the lifeboat born?",
        "on the Moon",
        "The man in the lifeboat was born on the Moon.",
    ),
    ("When did the Giant come back?", "seven years later", "The Giant came back seven years later."),
    (
        "How did the youngest Princess feel when she saw the Giant?",
        "afraid",
        "The youngest Princess felt afraid when she saw the Giant.",
    ),
    (
        "How many times does Ferdinand visit with Butt?",
        "Three times",
        "Ferdinand visits with Butt three times.",
    ),
    (
        "About how long did it take the elevator to travel one floor?",
        "half a minute",
        "It took the elevator to travel one floor half a minute.",
    ),
    (
        "In what way did the spy intend to evade the Army?",
        "By hiding in the shaft",
        "The spy intended to evade the Army by hiding in the shaft.",
    ),
    (
        "Which of the following is a false statement about the corpse?",
        "He travelled to Earth",
        "That he travelled to Earth is a false statement about the corpse.",
    ),
    ("Did Tom leave the party?", "No", "Tom did not leave the party."),
    ("Was Tom at the party?", "Yes", "Tom was at the party."),
    ("The crew agrees that the city is", "dead", "The crew agrees that the city is dead."),
    ("吕受益为何主动寻求与程勇建立联系？", "他是病人", "吕受益主动寻求与程勇建立联系，因为他是病人。"),
    ("程勇最核心的意图是什么？", "建立合作", "程勇最核心的意图是建立合作。"),
    ("程勇和吕受益见面了吗？", "见过", "程勇和吕受益见面了吗：见过。"),
]


@pytest.mark.parametrize("question, option, expected", CLAIMS, ids=[c[0][:32] for c in CLAIMS])
def test_option_claim_turns_question_and_option_into_a_statement(
    question: str, option: str, expected: str
) -> None:
    assert option_claim(question, option) == expected


# -- verdicts --------------------------------------------------------------------------------


def verdict_of(
    question: str, options: list[str], snippets: Sequence[EvidenceSnippet], index: int
) -> OptionVerdict:
    return admit_options(question, options, snippets)[index]


def test_direct_support_inference_and_insufficient() -> None:
    snippets = [
        snippet("s1", "Tom stayed home and read a book after the storm. The roof leaked."),
        snippet("s2", "Later that week the storm had passed and Tom visited the harbour and the market."),
    ]
    options = ["He read a book", "He visited the lighthouse near the harbour", "He sailed to Venus"]
    verdicts = admit_options("What did Tom do after the storm?", options, snippets)
    assert [v.verdict for v in verdicts] == ["direct_support", "inference", "insufficient"]
    assert (
        verdicts[0].evidence_ids == ("s1",)
        and verdicts[0].support > verdicts[1].support > verdicts[2].support == 0.0
    )
    assert verdicts[1].evidence_ids[0] == "s2" and verdicts[2].evidence_ids == ()
    assert verdicts[0].claim == "Tom read a book after the storm."


def test_contradiction_when_the_supporting_sentence_negates_the_option() -> None:
    snippets = [
        snippet("a", "Tom never went to the lighthouse after the storm."),
        snippet("b", "Tom read a book instead."),
    ]
    verdict = verdict_of(
        "What did Tom do after the storm?", ["He went to the lighthouse", "He read a book"], snippets, 0
    )
    assert verdict.verdict == "contradiction" and verdict.evidence_ids[0] == "a"
    # A negated option against a negated source is support, not contradiction.
    negated = verdict_of(
        "Why did Ferdinand hide?",
        ["He was not on the manifest", "He was hungry"],
        [snippet("m", "Ferdinand hid because he was not on the manifest.")],
        0,
    )
    assert negated.verdict == "direct_support"


def test_wrong_relation_when_the_evidence_gives_the_option_to_another_actor() -> None:
    snippets = [
        snippet("a", "Mary left the party early because she was bored."),
        snippet("b", "Tom left the party because he felt tired."),
    ]
    verdicts = admit_options("Why did Tom leave the party?", ["Mary was bored", "He was tired"], snippets)
    assert verdicts[0].verdict == "wrong_relation" and "Mary" in verdicts[0].reason
    assert verdicts[1].verdict == "direct_support"


def test_wrong_relation_when_a_connective_makes_the_option_a_consequence() -> None:
    snippets = [snippet("a", "Because Ferdinand stowed away in the hold, he was hungry for days.")]
    verdicts = admit_options(
        "Why did Ferdinand stow away in the hold?", ["He was hungry", "He wanted adventure"], snippets
    )
    assert verdicts[0].verdict == "wrong_relation" and "consequence" in verdicts[0].reason
    # The same sentence answers the opposite question correctly.
    flipped = admit_options(
        "Why was Ferdinand hungry for days?", ["He stowed away in the hold", "He was ill"], snippets
    )
    assert flipped[0].verdict == "direct_support"


def test_wrong_grain_for_theme_like_options_and_later_consequences() -> None:
    snippets = [
        snippet("a", "The Giant built a high wall around his garden to keep the children out."),
        snippet("b", "When the wall came down, the children eventually returned to the garden."),
    ]
    question = "Why did the Giant build a wall around his garden?"
    verdicts = admit_options(
        question,
        [
            "Selfishness and loneliness",
            "To keep the children out",
            "The children eventually returned to the garden",
        ],
        snippets,
    )
    assert [v.verdict for v in verdicts] == ["wrong_grain", "direct_support", "wrong_grain"]
    assert "theme" in verdicts[0].reason and "consequence" in verdicts[2].reason
    # A theme question may be answered by a theme.
    theme = admit_options(
        "What is the main theme of the story?", ["Selfishness and loneliness", "A wall"], snippets
    )
    assert theme[0].verdict != "wrong_grain"


def test_chinese_options_are_admitted_with_bigrams_and_chinese_negation() -> None:
    snippets = [snippet("z1", "程勇卖药是为了赚钱。"), snippet("z2", "程勇没有去医院看望父亲。")]
    verdicts = admit_options("程勇为什么卖药？", ["为了赚钱", "为了救人"], snippets)
    assert verdicts[0].verdict == "direct_support" and verdicts[1].verdict == "insufficient"
    assert verdicts[0].claim == "程勇卖药，因为为了赚钱。"
    visit = admit_options("程勇做了什么？", ["他去医院看望父亲", "他卖药"], snippets)
    assert visit[0].verdict == "contradiction"


REACHABLE = {
    "direct_support": (
        "Why did Tom leave the party?",
        ["He was tired", "He was hungry"],
        [snippet("b", "Tom left the party because he felt tired.")],
        0,
    ),
    "inference": (
        "What did Tom do after the storm?",
        ["He visited the lighthouse near the harbour", "He slept"],
        [snippet("s2", "Later that week the storm had passed and Tom visited the harbour.")],
        0,
    ),
    "insufficient": (
        "Who was in the elevator?",
        ["A spy", "A soldier"],
        [snippet("e", "The elevator was empty.")],
        1,
    ),
    "contradiction": (
        "What did Tom do after the storm?",
        ["He went to the lighthouse", "He slept"],
        [snippet("a", "Tom did not go to the lighthouse after the storm.")],
        0,
    ),
    "wrong_relation": (
        "Why did Tom leave the party?",
        ["Mary was bored", "He was tired"],
        [snippet("a", "Mary left the party early because she was bored.")],
        0,
    ),
    "wrong_grain": (
        "Why did the Giant build a wall?",
        ["Greed and loneliness", "To keep children out"],
        [snippet("w", "The Giant built a wall to keep children out.")],
        0,
    ),
}


def test_each_verdict_of_the_closed_set_is_reachable() -> None:
    assert set(REACHABLE) == set(VERDICTS)
    for kind, (question, options, snippets, index) in REACHABLE.items():
        assert verdict_of(question, options, snippets, index).verdict == kind, kind


def test_no_evidence_leaves_every_option_insufficient() -> None:
    verdicts = admit_options("Who was in the elevator?", ["A spy", "A soldier"], [])
    assert [v.verdict for v in verdicts] == ["insufficient", "insufficient"] and all(
        v.support == 0 for v in verdicts
    )


# -- the finalizer's rule --------------------------------------------------------------------


def make_verdict(index: int, verdict: str, support: float) -> OptionVerdict:
    return OptionVerdict(index, f"option {index}", f"claim {index}", verdict, support, (), "")


def test_choose_option_prefers_direct_support_then_inference_then_support() -> None:
    verdicts = [
        make_verdict(0, "inference", 0.9),
        make_verdict(1, "direct_support", 0.5),
        make_verdict(2, "contradiction", 1.0),
        make_verdict(3, "direct_support", 0.7),
    ]
    index, note = choose_option(verdicts)
    assert index == 3 and note == "chose D: direct_support (support 0.70); also direct_support: B"
    assert choose_option(verdicts[:1] + verdicts[2:3])[0] == 0


def test_choose_option_records_the_gap_when_nothing_is_admitted() -> None:
    verdicts = [
        make_verdict(0, "contradiction", 0.9),
        make_verdict(1, "insufficient", 0.1),
        make_verdict(2, "wrong_relation", 0.8),
        make_verdict(3, "insufficient", 0.2),
    ]
    index, note = choose_option(verdicts)
    assert index == 3 and note.startswith("gap: no option is directly supported or inferable; chose D")
    only_wrong = [make_verdict(0, "contradiction", 0.9), make_verdict(1, "wrong_grain", 0.1)]
    assert choose_option(only_wrong)[0] == 1


def test_choose_option_breaks_ties_by_index_and_inverts_for_exception_questions() -> None:
    tied = [make_verdict(0, "inference", 0.4), make_verdict(1, "inference", 0.4)]
    assert choose_option(tied)[0] == 0 and choose_option(list(reversed(tied)))[0] == 0
    mixed = [
        make_verdict(0, "direct_support", 0.9),
        make_verdict(1, "insufficient", 0.2),
        make_verdict(2, "contradiction", 0.8),
    ]
    index, note = choose_option(mixed, exception=True)
    assert index == 2 and note.startswith("exception question")
    assert asks_for_exception("Which of the following is not a reason why Burnett kills Kriere?")
    assert asks_for_exception("All of these happened EXCEPT:")
    assert not asks_for_exception("Why was he not able to call his girlfriend?")
    with pytest.raises(ValueError):
        choose_option([])


def test_admission_is_deterministic_and_dense_similarity_is_optional() -> None:
    snippets = [
        snippet(f"s{i}", f"Sentence {i} mentions the harbour and boat number {i}. Tom rows home.")
        for i in range(60)
    ]
    options = ["He rowed home", "He swam to the harbour", "He flew"]
    question = "What did Tom do after the storm?"
    assert admit_options(question, options, snippets) == admit_options(question, options, snippets)
    seen: list[int] = []

    def embed(texts: Sequence[str]) -> np.ndarray:
        seen.append(len(texts))
        return HashingEmbedder().embed(texts)

    dense = admit_options(question, options, snippets, embed)
    assert dense == admit_options(question, options, snippets, HashingEmbedder().embed)
    # One call, bounded: the options plus the closest sentences that have no stored vector.
    assert seen == [len(options) + min(DENSE_CANDIDATES, MAX_EMBEDDED)]
    assert [v.support for v in dense] != [v.support for v in admit_options(question, options, snippets)]
    stored = [replace(s, vector=HashingEmbedder().embed([s.text])[0]) for s in snippets]
    seen.clear()
    with_stored = admit_options(question, options, stored, embed)
    assert seen == [len(options)]  # stored vectors are reused: only the options are embedded
    assert with_stored == admit_options(question, options, stored, embed)


# -- LLM reader ------------------------------------------------------------------------------

QUESTION = "Why did Tom leave the party?"
OPTIONS = ["Mary was bored", "He was tired", "He wanted to dance"]
SNIPPETS = [
    snippet("a", "Mary left the party early because she was bored."),
    snippet("b", "Tom left the party because he felt tired."),
]


def _client(server: FakeOpenAIServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(fast_llm_settings(server.url, max_tokens=512), cache=None)


def test_llm_admission_takes_the_models_verdicts_and_offline_support(
    fake_llm_server: FakeOpenAIServer,
) -> None:
    reply = {
        "options": [
            {
                "option": "B",
                "claim": "Tom left because he was tired.",
                "verdict": "direct_support",
                "evidence_ids": ["b", "zz"],
                "reason": "b says so",
            },
            {
                "option": "A",
                "claim": "Tom left because Mary was bored.",
                "verdict": "wrong_relation",
                "evidence_ids": ["a"],
                "reason": "Mary's reason",
            },
            {
                "option": "C",
                "claim": "Tom left to dance.",
                "verdict": "insufficient",
                "evidence_ids": [],
                "reason": "",
            },
        ]
    }
    fake_llm_server.responder = lambda body: json.dumps(reply)
    with _client(fake_llm_server) as client:
        verdicts = admit_options_llm(client, request_factory(), QUESTION, OPTIONS, SNIPPETS)
    offline = admit_options(QUESTION, OPTIONS, SNIPPETS)
    assert [v.verdict for v in verdicts] == ["wrong_relation", "direct_support", "insufficient"]
    assert verdicts[1].evidence_ids == ("b",) and verdicts[1].claim == "Tom left because he was tired."
    assert [v.support for v in verdicts] == [v.support for v in offline] and verdicts[2].reason == "llm"
    assert choose_option(verdicts)[0] == 1
    user = last_user_text(fake_llm_server.chat_requests()[0].body["messages"])
    assert "C. He wanted to dance" in user and "[b] (sentence) Tom left the party" in user


@pytest.mark.parametrize(
    "reply",
    [
        "{not json",
        json.dumps(
            {
                "options": [
                    {
                        "option": "A",
                        "claim": "x",
                        "verdict": "direct_support",
                        "evidence_ids": [],
                        "reason": "",
                    }
                ]
            }
        ),
        json.dumps(
            {
                "options": [
                    {"option": letter, "claim": "x", "verdict": "plausible", "evidence_ids": [], "reason": ""}
                    for letter in "ABC"
                ]
            }
        ),
    ],
    ids=["malformed", "missing options", "verdict outside the closed set"],
)
def test_llm_admission_falls_back_to_offline_on_an_unusable_reply(
    fake_llm_server: FakeOpenAIServer, reply: str
) -> None:
    fake_llm_server.responder = lambda body: reply
    with _client(fake_llm_server) as client:
        verdicts = admit_options_llm(client, request_factory("zh"), QUESTION, OPTIONS, SNIPPETS)
    assert verdicts == admit_options(QUESTION, OPTIONS, SNIPPETS)
    assert "证据" in last_user_text(fake_llm_server.chat_requests()[0].body["messages"])


def test_option_admission_reply_rejects_repeated_letters() -> None:
    judgement = {"option": "a.", "claim": "c", "verdict": "inference", "evidence_ids": [], "reason": ""}
    assert OptionAdmissionReply.model_validate({"options": [judgement]}).options[0].option == "A"
    with pytest.raises(ValueError):
        OptionAdmissionReply.model_validate({"options": [judgement, {**judgement, "option": "A"}]})
