"""Reading Skill Cards: catalog loading and validation, the offline selector on typical STAGE /
FairytaleQA / QuALITY question shapes, operator rendering, and the LLM selector with its fallback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.responses.query import SKILL_IDS, SkillChoice
from tasks.llm.client.openai_client import OpenAICompatibleClient
from tasks.query.plan import decompose
from tasks.query.skills.cards import (
    FALLBACK_SKILL,
    MAX_OPERATOR_WORDS,
    OPTION_ADMISSION,
    SKILLS_DIR,
    SkillCard,
    SkillCardError,
    _TextOnlyEnv,
    load_cards,
    render_operators,
    select_skills_llm,
    select_skills_offline,
)
from tests.fixtures.llm_fixtures import fast_llm_settings, request_factory
from tests.fixtures.openai_server import FakeOpenAIServer, last_user_text

CJK = re.compile(r"[\u4e00-\u9fff]")
REQUIRED_CARDS = {
    "event_indexing",
    "perspective_state",
    "quest_legal_path",
    "literal_slot",
    "story_grammar",
    "option_admission",
    "theme_implication",
}


# -- catalog ---------------------------------------------------------------------------------


def test_catalog_has_the_required_cards_in_sync_with_the_response_schema() -> None:
    cards = load_cards()
    assert REQUIRED_CARDS <= set(cards)
    assert set(cards) == set(SKILL_IDS)  # guided decoding can produce exactly the catalog ids
    for card in cards.values():
        assert isinstance(card, SkillCard) and card.path == f"{card.id}.toml"
        assert len(card.operator.split()) <= MAX_OPERATOR_WORDS
        assert CJK.search(card.operator_zh) and CJK.search(card.name_zh)
        assert len(card.evidence_rules) >= 3 and len(card.failure_modes) >= 3 and len(card.seeds) > 100
        assert any(CJK.search(p.pattern) for p in card.patterns), f"{card.id} has no Chinese trigger"
        assert any(re.search(r"[a-z]", p.pattern) for p in card.patterns), f"{card.id} has no English trigger"
    assert cards[OPTION_ADMISSION].answer_formats == ("multiple_choice",)


def test_cards_are_cached_per_folder_and_the_folder_is_injectable(tmp_path: Path) -> None:
    first, second = load_cards(), load_cards()
    assert first is not second and all(first[k] is second[k] for k in first)  # copies of one cached catalog
    folder = tmp_path / "cards"
    shutil.copytree(SKILLS_DIR, folder)
    (folder / "theme_implication.toml").unlink()
    assert set(load_cards(folder)) == set(first) - {"theme_implication"}


def _break(folder: Path, name: str, edit: Callable[[str], str]) -> None:
    path = folder / name
    path.write_text(edit(path.read_text(encoding="utf-8")), encoding="utf-8")


BROKEN = {
    "missing operator": (
        "story_grammar.toml",
        lambda s: re.sub(r'(?ms)^operator = """.*?"""\n', "", s, count=1),
        r"story_grammar\.toml: missing required fields \['operator'\]",
    ),
    "bad regex": (
        "literal_slot.toml",
        lambda s: s.replace("patterns = [", "patterns = ['(unclosed', ", 1),
        r"literal_slot\.toml: triggers\.patterns pattern '\(unclosed' does not compile",
    ),
    "duplicate id": (
        "story_grammar.toml",
        lambda s: s.replace('id = "story_grammar"', 'id = "causal_chain"'),
        r"story_grammar\.toml: id 'causal_chain' already used by causal_chain\.toml",
    ),
    "key after the triggers table": (
        "causal_chain.toml",
        lambda s: s + 'failure_hint = "x"\n',
        r"causal_chain\.toml: unknown trigger keys \['failure_hint'\]",
    ),
    "operator too long": (
        "event_indexing.toml",
        lambda s: s.replace('operator = """', 'operator = """' + "word " * 61, 1),
        r"event_indexing\.toml: operator has \d+ words, at most 60",
    ),
    "unknown wh form": (
        "quest_legal_path.toml",
        lambda s: s.replace('wh = ["why", "how"]', 'wh = ["wherefore"]'),
        r"quest_legal_path\.toml: 'triggers\.wh' has unknown values \['wherefore'\]",
    ),
    "invalid toml": (
        "perspective_state.toml",
        lambda s: s.replace('id = "perspective_state"', "id = perspective_state"),
        r"perspective_state\.toml: not valid TOML",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_a_broken_card_is_a_clear_error_naming_the_file(tmp_path: Path, case: str) -> None:
    name, edit, message = BROKEN[case]
    folder = tmp_path / "cards"
    shutil.copytree(SKILLS_DIR, folder)
    _break(folder, name, edit)
    with pytest.raises(SkillCardError, match=message):
        load_cards(folder)


def test_an_empty_folder_or_a_catalog_without_the_fallback_card_is_rejected(tmp_path: Path) -> None:
    with pytest.raises(SkillCardError, match="no skill cards"):
        load_cards(tmp_path)
    folder = tmp_path / "cards"
    shutil.copytree(SKILLS_DIR, folder)
    (folder / "literal_slot.toml").unlink()
    with pytest.raises(SkillCardError, match="lacks the required card 'literal_slot'"):
        load_cards(folder)


# -- offline selector ------------------------------------------------------------------------

QUALITY_OPTIONS = [
    "He had special permission",
    "He was a stowaway",
    "He was a child",
    "He wasn't officially on the manifest",
]
SHAPES = [
    # (question, options, qtype, expected first, must include, must exclude)
    (
        "What occurs in the kitchen shortly before John and Nadia sit down for their tense meal?",
        None,
        None,
        "event_indexing",
        set(),
        {"theme_implication"},
    ),
    (
        "Why did the Giant take the eldest Princess?",
        None,
        None,
        "quest_legal_path",
        {"causal_chain"},
        {"literal_slot"},
    ),
    (
        "How did the youngest Princess feel when she found out about her sisters' wounds?",
        None,
        None,
        "perspective_state",
        set(),
        {"quest_legal_path", "literal_slot"},
    ),
    (
        "Who had three daughters?",
        None,
        None,
        "literal_slot",
        set(),
        {"quest_legal_path", "perspective_state"},
    ),
    ("Where did Charcoal Nils make a home?", None, None, "literal_slot", set(), {"causal_chain"}),
    (
        "How does John Buckingham's relationship with Alexei evolve from their initial confrontation "
        "at the lake to the "
        "final encounter in Alexei's suite?",
        None,
        None,
        "event_indexing",
        {"perspective_state"},
        {"quest_legal_path"},
    ),
    (
        "What pivotal event shifts the narrative momentum toward Holden's moment of introspection?",
        None,
        None,
        "story_grammar",
        {"causal_chain"},
        {"literal_slot"},
    ),
    (
        "Who are the 3 most central characters in this story?",
        None,
        None,
        "literal_slot",
        {"theme_implication"},
        set(),
    ),
    (
        "How many times does Ferdinand visit with Butt?",
        ["Once", "Twice", "Three times", "Never"],
        None,
        OPTION_ADMISSION,
        {"literal_slot"},
        {"quest_legal_path"},
    ),
    (
        "Why did Ferdinand think the sign did not apply to him?",
        QUALITY_OPTIONS,
        None,
        OPTION_ADMISSION,
        {"quest_legal_path"},
        set(),
    ),
    (
        "Which of the following is a false statement about the 98th corpse?",
        ["A", "B", "C", "D"],
        None,
        OPTION_ADMISSION,
        set(),
        set(),
    ),
    ("吕受益为何主动寻求与程勇建立联系？", None, None, "quest_legal_path", set(), {"literal_slot"}),
    (
        "在“程勇质问彭浩并提起回家之事”之前，前面先发生了什么关键情节？",
        None,
        None,
        "event_indexing",
        set(),
        set(),
    ),
    (
        "从[11.警察局夜内]到[130.车日内]，曹斌对程勇的态度和两人之间的互动模式经历了怎样的转变？",
        None,
        None,
        "event_indexing",
        {"perspective_state"},
        {"quest_legal_path"},
    ),
    ("这个故事中最主要的3个角色分别是谁？", None, None, "literal_slot", {"theme_implication"}, set()),
    ("Tell me more.", None, None, FALLBACK_SKILL, set(), set()),
    # A benchmark type hint adds its cards when the surface alone is ambiguous.
    ("What moment makes his action significant?", None, "Temporal Reasoning", "event_indexing", set(), set()),
]


@pytest.mark.parametrize(
    "question, options, qtype, first, include, exclude", SHAPES, ids=[s[0][:40] for s in SHAPES]
)
def test_offline_selector_on_typical_question_shapes(
    question: str,
    options: list[str] | None,
    qtype: str | None,
    first: str,
    include: set[str],
    exclude: set[str],
) -> None:
    picked = select_skills_offline(question, options, qtype=qtype)
    assert len(picked) in (1, 2, 3) and len(set(picked)) == len(picked)
    assert picked[0] == first, picked
    assert include <= set(picked), picked
    assert not exclude & set(picked), picked


def test_selector_reads_the_planners_intents_the_same_way_as_the_question_text() -> None:
    question = "What did Tephany bring when she met Denis?"
    intents = decompose(_TextOnlyEnv(), question, None)  # type: ignore[arg-type]
    assert intents.form.wh == "when" and "order" in intents.needs
    assert select_skills_offline(question, None, intents, None) == select_skills_offline(question, None)
    assert "event_indexing" in select_skills_offline(question, None, intents, None)
    # The planner's needs reinforce a card but never select it alone: without 'order' the
    # wh-form is too weak a signal for event indexing.
    intents.needs.discard("order")
    assert "event_indexing" not in select_skills_offline(question, None, intents, None)
    intents.needs = {"state", "pair"}
    assert "perspective_state" not in select_skills_offline(question, None, intents, None)


@settings(max_examples=60, deadline=None)
@given(
    question=st.text(max_size=120),
    options=st.one_of(st.none(), st.lists(st.text(max_size=20), min_size=2, max_size=5)),
)
def test_selector_always_returns_one_to_three_catalog_ids(question: str, options: list[str] | None) -> None:
    picked = select_skills_offline(question, options)
    assert len(picked) in (1, 2, 3) and set(picked) <= set(SKILL_IDS) and len(set(picked)) == len(picked)
    assert (picked[0] == OPTION_ADMISSION) == bool(options)


def test_render_operators_in_both_languages() -> None:
    cards = load_cards()
    english = render_operators(["literal_slot", "causal_chain", "no_such_card"], "en")
    lines = english.splitlines()
    assert len(lines) == 3 and lines[0].startswith("Reading skills")
    assert lines[1] == f"- {cards['literal_slot'].name}: {cards['literal_slot'].operator}"
    chinese = render_operators(["perspective_state"], "zh")
    assert cards["perspective_state"].operator_zh in chinese and chinese.startswith("阅读技能")
    assert render_operators([], "en") == ""


# -- LLM selector ----------------------------------------------------------------------------


def _client(server: FakeOpenAIServer) -> OpenAICompatibleClient:
    return OpenAICompatibleClient(fast_llm_settings(server.url), cache=None)


def test_llm_selector_uses_the_models_choice(fake_llm_server: FakeOpenAIServer) -> None:
    reply = {"skill_ids": ["perspective_state", "event_indexing"], "reason": "feelings over time"}
    fake_llm_server.responder = lambda body: json.dumps(reply)
    with _client(fake_llm_server) as client:
        picked = select_skills_llm(
            client,
            request_factory(),
            "How did Tephany feel after the fairy left?",
            None,
            "3 passages; 2 events",
        )
    assert picked == ["perspective_state", "event_indexing"]
    [sent] = fake_llm_server.chat_requests()
    user = last_user_text(sent.body["messages"])
    assert "How did Tephany feel" in user and "- option_admission (Multiple-choice option admission)" in user
    assert "3 passages; 2 events" in user and "free_text" in user


def test_llm_selector_keeps_option_admission_for_multiple_choice(fake_llm_server: FakeOpenAIServer) -> None:
    reply = {"skill_ids": ["quest_legal_path", "causal_chain", "story_grammar"], "reason": ""}
    fake_llm_server.responder = lambda body: json.dumps(reply)
    with _client(fake_llm_server) as client:
        picked = select_skills_llm(
            client,
            request_factory("zh"),
            "Why did Ferdinand think the sign did not apply to him?",
            QUALITY_OPTIONS,
            "",
        )
    assert picked == [OPTION_ADMISSION, "quest_legal_path", "causal_chain"]
    user = last_user_text(fake_llm_server.chat_requests()[0].body["messages"])
    assert "技能目录" in user and "D. He wasn't officially on the manifest" in user


@pytest.mark.parametrize(
    "reply",
    [
        "not json at all",
        json.dumps({"skill_ids": ["mind_reading"], "reason": ""}),
        json.dumps({"skill_ids": [], "reason": ""}),
    ],
)
def test_llm_selector_falls_back_to_offline_on_an_unusable_reply(
    fake_llm_server: FakeOpenAIServer, reply: str
) -> None:
    fake_llm_server.responder = lambda body: reply
    question = "Why did the Giant take the eldest Princess?"
    with _client(fake_llm_server) as client:
        picked = select_skills_llm(client, request_factory(), question, None, "sketch")
    assert picked == select_skills_offline(question, None)
    assert fake_llm_server.counts["chat"] >= 1


def test_skill_choice_schema_rejects_unknown_and_repeated_ids() -> None:
    assert SkillChoice.model_validate({"skill_ids": ["literal_slot"]}).skill_ids == ["literal_slot"]
    too_many = ["literal_slot", "causal_chain", "story_grammar", "event_indexing"]
    for bad in (["literal_slot", "literal_slot"], ["made_up"], [], too_many):
        with pytest.raises(ValueError):
            SkillChoice.model_validate({"skill_ids": bad})
