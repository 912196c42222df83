"""The LLM finalizer: the prompt puts source passages first, replies are checked against the
packet (option range, cited sections, verbatim quotes) and failures fall back to an answer
labelled offline."""

from __future__ import annotations

import re
from typing import Any

import pytest

from schemas.config import Settings
from schemas.responses.agent import FinalAnswerReply
from tasks.llm.requests.prompts import load_prompt, render_messages
from tasks.query.agent_loop import request_factory_for
from tasks.query.answer_nkw import answer_nkw
from tasks.query.answer_types import Answer
from tasks.query.evidence.board import BoardItem, EvidenceBoard, Passage
from tasks.query.question_form import read_question
from tasks.query.reader.finalize import FinalAnswer
from tasks.query.reader.llm import check_reply, final_values, make_llm_finalizer, quote_in
from tasks.query.reader.shape import READER_PROMPT, reader_request
from tasks.query.tools.env import ToolEnv
from tasks.query.tools.types import ToolRow
from tasks.tables.contracts import check_contracts
from tasks.tables.io import to_arrow
from tests.fixtures.agent_fixtures import final_reply, make_client
from tests.fixtures.openai_server import FakeOpenAIServer

QUESTION = "Where does Tom hide the brass key?"


OPTIONS = ["In a tobacco tin in the glovebox", "Under the lamp", "In the harbour office", "In his boot"]
PASSAGES = [
    Passage(
        "c1", "s1", "INT. VAN - DAY", 4, "He drops the brass key inside,\nsnaps the lid shut.", 12, 0, 50, 1.0
    ),
    Passage(
        "c2",
        "s2",
        "INT. LIGHTHOUSE - NIGHT",
        13,
        "TOM\nIn the harbour master’s drawer. Nia took it.",
        12,
        0,
        50,
        0.5,
    ),
]
BOARD = EvidenceBoard([], [], [], PASSAGES, 100)


def reply(**values: Any) -> FinalAnswerReply:
    base = {
        "answer": "In a tobacco tin.",
        "chosen_option": None,
        "cited_ordinals": [4],
        "quotes": ["drops the brass key inside"],
        "confidence": 0.8,
    }
    return FinalAnswerReply(**(base | values))


def fixed_fallback(*_args: Any) -> FinalAnswer:
    return FinalAnswer(
        "fallback answer", 2, [0.1, 0.2, 0.6, 0.1], [("s1", "He drops the brass key")], ["rule answer"]
    )


def run(
    env: ToolEnv, settings: Settings, client: Any, options: list[str] | None = None, **finalizer_args: Any
) -> tuple[Answer, Any]:
    factory = request_factory_for(env.store.doc_id, env.store.source.language, QUESTION, options)
    finalizer = make_llm_finalizer(client, factory, **finalizer_args)
    answer = answer_nkw(
        env,
        QUESTION,
        options,
        settings.answer,
        settings.retrieval,
        planner=lambda *_: None,
        select_skills=lambda *_: ["literal_slot"],
        finalize=finalizer,
    )
    return answer, finalizer


# -- checking a reply against the packet ----------------------------------------------------


def test_quotes_match_across_whitespace_case_typographic_marks_and_ellipses() -> None:
    text = PASSAGES[1].text
    assert quote_in("in the harbour master's drawer", text)  # ’ in the source, ' in the quote
    assert quote_in("TOM In the harbour", text)  # the line break between cue and dialogue
    assert quote_in("harbour master’s … Nia took it", text)
    assert not quote_in("Nia took it ... harbour master", text)  # elided parts keep their order
    assert not quote_in("in the lighthouse drawer", text) and not quote_in("...", text)


def test_a_valid_reply_keeps_verified_citations_and_quotes() -> None:
    final, problem = check_reply(
        reply(
            cited_ordinals=[4, 13, 99],
            quotes=[
                "“drops the brass key inside”",
                "Nia hid it in her coat pocket",
                "drawer",
                "harbour master's drawer",
            ],
        ),
        None,
        BOARD,
    )
    assert problem == "" and final is not None and final.is_offline is False
    assert final.text == "In a tobacco tin." and final.chosen_option is None
    assert final.quotes == [("s1", "drops the brass key inside"), ("s2", "harbour master's drawer")]
    assert "dropped citations not in the packet [99]" in final.notes[1]
    assert (
        "dropped 2 quote(s) not found verbatim" in final.notes[1]
    )  # invented, and too short to prove anything


def test_a_cited_section_without_a_quote_is_cited_by_its_opening_words() -> None:
    final, _ = check_reply(reply(cited_ordinals=[13], quotes=[]), None, BOARD)
    assert final.quotes == [("s2", "TOM In the harbour master’s drawer. Nia took it.")]


@pytest.mark.parametrize(
    "chosen, problem",
    [
        (None, "no option chosen"),
        (4, "chosen option 4 is out of range"),
        (-1, "chosen option -1 is out of range"),
    ],
)
def test_multiple_choice_needs_an_option_in_range(chosen: int | None, problem: str) -> None:
    final, why = check_reply(reply(chosen_option=chosen), OPTIONS, BOARD)
    assert final is None and why.startswith(problem)
    ok, _ = check_reply(reply(chosen_option=3), OPTIONS, BOARD)
    assert ok.text == "In his boot" and ok.chosen_option == 3 and "In a tobacco tin." in ok.notes[0]
    free, _ = check_reply(reply(chosen_option=1), None, BOARD)
    assert free.chosen_option is None and "ignored chosen_option 1" in free.notes[1]


def test_prompt_values_put_source_passages_first_and_letter_the_options() -> None:
    entity = BoardItem(
        ToolRow(
            "entity", "ent_tom", "Tom (character). Margaret's brother.", 0.9, "graph", "d", section_ordinal=4
        ),
        "entity",
        0.9,
        "e",
    )
    entity.facts = [ToolRow("fact", "f1", "Tom hides the key in the van.", 0.8, "text", "d")]
    board = EvidenceBoard([entity], [], [], PASSAGES, 100)
    values = final_values(QUESTION, OPTIONS, board, "", "en")
    assert values["options"].splitlines() == [
        "Options:",
        "A. In a tobacco tin in the glovebox",
        "B. Under the lamp",
        "C. In the harbour office",
        "D. In his boot",
    ]
    assert values["passages"].startswith("[4] INT. VAN - DAY:\nHe drops the brass key inside,")
    assert (
        values["entities"]
        == "- Tom (character). Margaret's brother. (§4)\n    · Tom hides the key in the van."
    )
    assert values["relations"] == "(none)" and values["skills"] == "Reading skills: none."
    for language in ("en", "zh"):
        plain = final_values(QUESTION, None, board, "", language)
        values, _ = reader_request(plain, None, [], None, read_question(QUESTION), language)
        messages = render_messages(load_prompt(READER_PROMPT, language), values)
        user = messages[-1]["content"]
        assert user.index("[4] INT. VAN") < user.index("Tom (character)")  # source text before the notes
    assert final_values(QUESTION, OPTIONS, board, "", "zh")["options"].startswith("选项：\nA. ")


# -- through the test server ------------------------------------------------------------------


def test_llm_answer_through_the_pipeline(env: ToolEnv, settings: Settings, server: FakeOpenAIServer) -> None:
    # The model reads option A as right wherever it is listed; the offline reader picks another, so
    # the model is asked again with the options rotated and its pick stands.
    server.responder = lambda body: final_reply(body, option_text=OPTIONS[0])
    with make_client(server.url) as client:
        answer, finalizer = run(
            env, settings, client, OPTIONS, render_skills=lambda ids, lang: f"Use {ids} in {lang}."
        )
    assert answer.is_offline is False and answer.chosen_option == 0 and answer.answer == OPTIONS[0]
    assert finalizer.failures == [] and [row["status"] for row in finalizer.llm_calls] == ["ok", "ok"]
    first, again = server.chat_requests()
    quoted = final_reply(first.body)["quotes"][0]
    assert (
        answer.citations[0].quote == quoted
        and answer.citations[0].ordinal == final_reply(first.body)["cited_ordinals"][0]
    )
    user = first.body["messages"][-1]["content"]
    assert "Use ['literal_slot'] in en." in user and "D. In his boot" in user
    schema = first.body["response_format"]["json_schema"]
    assert schema["name"] == "ReaderReplyOptions4"  # an option is always named, one of the four
    assert schema["schema"]["properties"]["option"]["enum"] == ["A", "B", "C", "D"]
    assert "option" in schema["schema"]["required"]
    moved = again.body["messages"][-1]["content"]
    assert "A. Under the lamp" in moved and "D. In a tobacco tin in the glovebox" in moved
    assert any("named option A again with the options rotated" in note for note in answer.notes)


def test_out_of_range_option_falls_back(env: ToolEnv, settings: Settings, server: FakeOpenAIServer) -> None:
    server.responder = lambda body: final_reply(body, chosen=7)
    with make_client(server.url) as client:
        answer, finalizer = run(
            env, settings, client, OPTIONS, fallback=fixed_fallback, render_skills=lambda *_: ""
        )
    assert answer.is_offline is True and answer.answer == "fallback answer" and answer.chosen_option == 2
    # The reply model takes only the options' letters: H is refused by validation, asked again, refused.
    assert answer.notes[:2] == ["LLM answer failed (invalid): offline answer", "rule answer"]
    [failure] = finalizer.failures
    assert failure["error"].startswith("llm invalid:") and "option" in failure["error"]
    assert check_contracts("failures", to_arrow("failures", [failure]), lambda _table: None) == []


def test_offline_pick_is_shown_beside_the_options(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    server.responder = lambda body: final_reply(body, option_text=OPTIONS[1])
    with make_client(server.url) as client:
        answer, _ = run(env, settings, client, OPTIONS, fallback=fixed_fallback, render_skills=lambda *_: "")
    first, again = server.chat_requests()
    user = first.body["messages"][-1]["content"]
    assert "A text-matching reader leans to option C (it can be wrong)." in user  # fixed_fallback picks 2
    # rotated one place, the offline pick is shown under its new letter
    assert "A text-matching reader leans to option B" in again.body["messages"][-1]["content"]
    assert answer.is_offline is False and answer.chosen_option == 1 and answer.answer == OPTIONS[1]


def test_a_position_preference_does_not_override_the_offline_pick(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    # The 0.5B model named B in every QuALITY answer: rotated, B is another option, so its pick falls.
    server.responder = lambda body: final_reply(body, chosen=1)
    with make_client(server.url) as client:
        answer, finalizer = run(
            env, settings, client, OPTIONS, fallback=fixed_fallback, render_skills=lambda *_: ""
        )
    assert len(server.chat_requests()) == 2
    assert answer.is_offline is True and answer.chosen_option == 2 and answer.answer == "fallback answer"
    assert "did not stand with the options rotated (option C): the offline pick C kept" in answer.notes[0]
    assert finalizer.failures == []  # overruled by a check, not failed


def test_a_model_agreeing_with_the_offline_pick_is_asked_once(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    server.responder = lambda body: final_reply(body, option_text=OPTIONS[2])
    with make_client(server.url) as client:
        answer, _ = run(env, settings, client, OPTIONS, fallback=fixed_fallback, render_skills=lambda *_: "")
    assert len(server.chat_requests()) == 1
    assert answer.is_offline is False and answer.chosen_option == 2 and answer.answer == OPTIONS[2]


@pytest.mark.parametrize("candidate", [1, 2, 0])
def test_free_questions_offer_the_offline_readers_short_answers(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer, candidate: int
) -> None:
    server.responder = lambda body: final_reply(body, candidate=candidate)
    with make_client(server.url) as client:
        answer, _ = run(env, settings, client, render_skills=lambda *_: "")
    offline = answer_nkw(
        env, QUESTION, None, settings.answer, settings.retrieval, planner=lambda *_: None,
        select_skills=lambda *_: ["literal_slot"],
    )  # fmt: skip
    [sent] = server.chat_requests()
    user = sent.body["messages"][-1]["content"]
    offered = re.findall(r"^(\d)\. (.+)$", user.split("Candidate answers cut from the passages")[1], re.M)
    assert [int(number) for number, _ in offered] == list(range(1, len(offered) + 1)) and len(offered) >= 2
    schema = sent.body["response_format"]["json_schema"]
    assert schema["name"] == f"ReaderReplyCandidates{len(offered)}Chars70"  # a where-question: 10 words
    assert schema["schema"]["properties"]["candidate"]["enum"] == list(range(len(offered) + 1))
    assert "Answer in at most 10 words." in user
    assert offered[0][1] == offline.answer  # the first candidate is the offline reader's own answer
    assert answer.is_offline is False
    if candidate:
        assert answer.answer == offered[candidate - 1][1]
        assert any(f"chose the offline reader's candidate {candidate}" in note for note in answer.notes)
    else:
        assert answer.answer == "In Mr. Crowe's drawer."  # its own words


@pytest.mark.parametrize(
    "faults, status", [(("refusal",), "refused"), (("schema_invalid", "malformed_json"), "invalid")]
)
def test_llm_failure_falls_back_to_the_offline_finalizer(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer, faults: tuple[str, ...], status: str
) -> None:
    server.queue_faults(*faults)
    with make_client(server.url) as client:
        answer, finalizer = run(env, settings, client, render_skills=lambda *_: "")
    assert answer.is_offline is True and answer.notes[0] == f"LLM answer failed ({status}): offline answer"
    assert answer.notes[1].startswith("offline: extractive answer")  # the real offline finalizer answered
    assert answer.answer and answer.citations
    assert finalizer.failures[0]["error"].startswith(f"llm {status}:")
    assert len(finalizer.llm_calls) == len(faults)


def test_real_reading_skill_operators_reach_the_prompt(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer
) -> None:
    from tasks.query.skills.cards import load_cards, render_operators, select_skills_offline

    server.responder = lambda body: final_reply(body)
    factory = request_factory_for(env.store.doc_id, env.store.source.language, QUESTION)
    with make_client(server.url) as client:
        finalizer = make_llm_finalizer(client, factory)
        answer = answer_nkw(
            env,
            QUESTION,
            None,
            settings.answer,
            settings.retrieval,
            planner=lambda *_: None,
            select_skills=select_skills_offline,
            finalize=finalizer,
        )
    skills = answer.notes[-1].split("skills ")[1].split(";")[0].split(", ")
    picked = [card for card in load_cards() if card in skills]
    assert skills == answer.skills
    assert picked and answer.is_offline is False
    assert render_operators(picked, "en") in server.chat_requests()[0].body["messages"][-1]["content"]


@pytest.mark.parametrize(
    "own, offline_kept",
    [
        ("Tom hides the brass key.", True),
        ("In a purple zeppelin.", True),
        ("In Mr. Crowe's drawer.", False),
    ],
)
def test_an_own_answer_stands_only_when_it_adds_words_from_the_passages(
    env: ToolEnv, settings: Settings, server: FakeOpenAIServer, own: str, offline_kept: bool
) -> None:
    def respond(body: dict[str, Any]) -> dict[str, Any]:
        return {**final_reply(body, candidate=0), "answer": own}

    server.responder = respond
    with make_client(server.url) as client:
        answer, finalizer = run(env, settings, client, render_skills=lambda *_: "")
    assert answer.is_offline is offline_kept and finalizer.failures == []
    if offline_kept:
        assert answer.notes[0].startswith("LLM answer not kept (its own answer did not stand:")
    else:
        assert answer.answer == own
